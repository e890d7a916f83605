/**
 * Data export and account deletion: what the API answers and the texts the Settings tab shows, shared by the
 * API, the workflows and the front end.
 */

/** A finished export's download link works for 24 hours after the zip was written. */
export const EXPORT_LINK_TTL_SECONDS = 24 * 60 * 60;

/** The zip lives in the `videos` bucket under exports/<userId>/<exportId>/ (services/accounts/accountData.ts explains why). */
export const EXPORT_BUCKET = 'videos' as const;

export function exportFolder(userId: string): string {
  return `exports/${userId}`;
}

export function exportObjectPath(userId: string, exportId: string, fileName: string): string {
  return `${exportFolder(userId)}/${exportId}/${fileName}`;
}

/** The download's name: render-studio-export-<yyyy-mm-dd>-<n>.zip (the day the export was requested, UTC). */
export function exportFileName(requestedAt: Date, sequence: number): string {
  return `render-studio-export-${requestedAt.toISOString().slice(0, 10)}-${sequence}.zip`;
}

export function dataExportWorkflowId(userId: string, sequence: number): string {
  return `export-${userId}-${sequence}`;
}

export function accountDeletionWorkflowId(userId: string): string {
  return `account-deletion-${userId}`;
}

/** pending / processing while the workflow runs; `expired` once the link's 24 hours are over (the file may be gone). */
export type DataExportViewStatus = 'pending' | 'processing' | 'completed' | 'failed' | 'expired';

export interface DataExportView {
  id: string;
  /** n of export-<userId>-<n>: the user's how-many-th export this is */
  number: number;
  workflowId: string;
  status: DataExportViewStatus;
  progress: number;
  message: string;
  error: string | null;
  /** A signed link (valid until `expiresAt`) while the export is completed, else null. */
  downloadUrl: string | null;
  fileName: string | null;
  sizeBytes: number | null;
  fileCount: number | null;
  createdAt: string;
  completedAt: string | null;
  expiresAt: string | null;
}

export type AccountDeletionStatus = 'deleting' | 'deleted';

export interface AccountDeletionAnswer {
  success: true;
  status: AccountDeletionStatus;
  workflowId: string;
}

export const ACCOUNT_DATA_MESSAGES = {
  exportQueued: 'Export requested',
  exportCollecting: 'Collecting your profile, projects and history',
  exportFiles: 'Adding your files',
  exportFinishing: 'Finishing your export',
  exportReady: 'Your export is ready',
  exportFailed: 'The export failed. Please try again.',
  exportCancelled: 'The export was stopped.',
  exportExpired: 'This download link has expired. Request a new export.',
  exportStartFailed: 'Could not start the data export. Please try again.',
  exportNotFound: 'No data export yet',
  confirmEmailRequired: 'Type your e-mail address to confirm',
  confirmEmailMismatch: "The e-mail you typed does not match your account's e-mail address",
  deletionStartFailed: 'Could not start the account deletion. Please try again.',
  accountBeingDeleted: 'This account is being deleted',
} as const;

/** A workspace that keeps an account from being deleted: the user is its only owner and it has other members. */
export interface SoleOwnedWorkspace {
  id: string;
  name: string;
  personal: boolean;
}

function workspaceLabel(w: SoleOwnedWorkspace): string {
  return w.personal ? `your personal workspace “${w.name}”` : `“${w.name}”`;
}

/**
 * Why the account cannot be deleted yet (409 ONLY_OWNER): the workspaces the user alone owns that have other members,
 * which would otherwise lose their only owner. Transferring ownership (or removing the members) lifts it.
 */
export function onlyOwnerMessage(workspaces: SoleOwnedWorkspace[]): string {
  const names = workspaces.map(workspaceLabel);
  const list = names.length <= 1 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
  const which = workspaces.length === 1 ? 'which has other members' : 'which have other members';
  const them = workspaces.length === 1 ? 'Make another member owner or remove them' : 'Make another member owner of each, or remove their members,';
  return `You are the only owner of ${list}, ${which}. ${them} before deleting your account.`;
}

export const DATA_EXPORT_ERROR_CODES = {
  startFailed: 'EXPORT_START_FAILED',
  notFound: 'EXPORT_NOT_FOUND',
} as const;

export const ACCOUNT_DELETION_ERROR_CODES = {
  confirmMismatch: 'CONFIRM_EMAIL_MISMATCH',
  startFailed: 'DELETION_START_FAILED',
  onlyOwner: 'ONLY_OWNER',
} as const;

/** The confirmation matches when it is the account's e-mail, ignoring case and surrounding spaces (e-mails are citext). */
export function confirmsEmail(typed: string, accountEmail: string): boolean {
  return typed.trim().toLowerCase() === accountEmail.trim().toLowerCase() && typed.trim() !== '';
}
