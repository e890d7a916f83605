/**
 * What a generating workflow records with a pending item, per content type, so approval can save it
 * into the project. Pure types and rules, shared by workflows, activities, API and front end.
 */
export interface StoredFile {
  bucket: 'renders' | 'images' | 'clips' | 'videos' | 'drafts';
  path: string;
}

export interface ImageApprovalMetadata {
  kind: 'image';
  originalPrompt: string;
  refinedPrompt: string;
  baseImageUrl: string;
  format: string;
  width: number;
  height: number;
  fileSize: number;
  mime: string;
  upscaled: boolean;
}

export interface ClipApprovalMetadata {
  kind: 'clip';
  renderId: string | null;
  imageId: string | null;
  effect: string;
  platform: string;
  aspectRatio: string;
  durationSeconds: number;
  fileSize: number;
  mime: string;
  promptUsed: string | null;
}

export interface AssemblyApprovalMetadata {
  kind: 'assembly';
  clipIds: string[];
  platform: string;
  aspectRatio: string;
  durationSeconds: number;
  fileSize: number;
  mime: string;
}

export type ApprovalMetadata = ImageApprovalMetadata | ClipApprovalMetadata | AssemblyApprovalMetadata;

export interface NewPendingApproval {
  /** Chosen by the generating workflow (uuid4() there, so a replay picks the same one). */
  approvalId: string;
  userId: string;
  projectId: string;
  fileName: string;
  aspectRatio: string | null;
  original: StoredFile;
  watermarked: StoredFile;
  /** In the original's bucket. */
  thumbnailPath: string | null;
  reservationId: string | null;
  cost: number;
  sourceJobId: string | null;
  metadata: ApprovalMetadata;
}

export function approvalWorkflowId(approvalId: string): string {
  return `approval-${approvalId}`;
}
