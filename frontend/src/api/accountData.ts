import type { AccountDeletionAnswer, DataExportView } from '../../../domain/accountData';
import { api } from './client';

export type { AccountDeletionAnswer, DataExportView } from '../../../domain/accountData';

/** Starts a data export (or answers the one still running). */
export async function requestDataExport(): Promise<DataExportView> {
  const body = await api.post('account/exports', { json: {} }).json<{ success: true; export: DataExportView }>();
  return body.export;
}

/** The latest export with its progress, or its signed download link once ready; null before the first one. */
export async function fetchLatestDataExport(): Promise<DataExportView | null> {
  const body = await api.get('account/exports', { retry: 0 }).json<{ success: true; export: DataExportView | null }>();
  return body.export;
}

/** Deletes the account; the server ends every session before it answers. */
export async function deleteAccount(confirmEmail: string): Promise<AccountDeletionAnswer> {
  return api.post('account/delete', { json: { confirmEmail }, retry: 0 }).json<AccountDeletionAnswer>();
}
