/**
 * What a generating workflow records with a pending item, per content type, so approval can save it
 * into the project. Pure types and rules, shared by workflows, activities, API and front end.
 */
import type { ApprovalPolicy } from './approvalPolicy';
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
  /** The compiled video the assembly stored (status pending_approval); approval marks it approved. */
  compiledVideoId?: string;
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
  /** The account (workspace) the item belongs to. */
  workspaceId: string;
  /** The member who started the generation (pending_approvals.created_by); absent in histories from before workspaces. */
  createdBy?: string | null;
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

/** One card of the Approvals view (GET /api/approvals/list), in the spec's field names. */
export interface ApprovalListItem {
  id: string;
  user_id: string;
  project_id: string;
  project_name: string | null;
  content_type: 'image' | 'clip' | 'assembly';
  status: 'pending';
  aspect_ratio: string | null;
  file_name: string;
  /** Always null: pay on approval, the original is linked only once the item is approved (it is then in the library). */
  original_file_url: null;
  watermarked_file_url: string | null;
  approval_deadline: string;
  cost: number;
  remaining_cost: number;
  created_at: string;
  prompt: string | null;
  /** who must approve it (the policy it started with) and who has (issue 42) */
  approvals: ApprovalProgressView;
  /** 1, or the next version of an item rejected with a request for changes (previous_approval_id) */
  version: number;
  previous_approval_id: string | null;
  /** a clip's effect and platform: what a request for changes starts the next version with, unless changed */
  clip_settings: { effect: string; platform: string } | null;
}

export interface ApprovalPersonView {
  user_id: string;
  /** the member's name (or e-mail); "A former member" once they left */
  name: string;
}

/** Where a pending item stands against its approval policy (domain/approvalPolicy.ts), as the caller sees it. */
export interface ApprovalProgressView {
  policy: ApprovalPolicy;
  /** the approvals it needs in all: 1 for "any member" */
  needed: number;
  approved_by: Array<ApprovalPersonView & { at: string }>;
  /** the named approvers still awaited */
  awaiting: ApprovalPersonView[];
  /** the caller has approved it */
  you_approved: boolean;
  /** the policy lets the caller approve it (their role aside) */
  you_may_approve: boolean;
}

/**
 * GET /api/approvals/stats: what the badge and the pending cap show. `pending_count` and `total_pending_cost` are the
 * queue's (the specs' fields: the badge counts what the queue shows); the start rule also counts the generations
 * still running, given apart, so the cap is reached at `pending_count + in_progress_count >= limit` (atPendingCap).
 */
export interface ApprovalStats {
  pending_count: number;
  limit: number;
  total_pending_cost: number;
  in_progress_count: number;
  in_progress_cost: number;
}

/** What the start rule counts towards the cap: the queue and the generations in flight (older answers lack the latter). */
export function countedTowardsCap(stats: Pick<ApprovalStats, 'pending_count'> & Partial<Pick<ApprovalStats, 'in_progress_count'>>): number {
  return stats.pending_count + (stats.in_progress_count ?? 0);
}

/** What approve and reject answer. */
export interface ApprovalDecisionResponse {
  success: true;
  error: null;
  code: string | null;
  contentId: string | null;
  warning: string | null;
  /** an approval under a policy of several approvals: where the item stands now (`contentId` is null while it waits for more) */
  approvals?: ApprovalProgressView;
}

export function approvalWorkflowId(approvalId: string): string {
  return `approval-${approvalId}`;
}
