/**
 * The realtime channel's events (DESIGN.md "Live updates"): small notes that something of the user's changed.
 * They carry kinds, ids and a status, never the data itself; the browser re-reads what changed.
 * Shared by the publishers (services, activities), the SSE route and the front end.
 */
export type JobKind = 'clip' | 'image-edit' | 'export' | 'draft' | 'assembly';
export type ContentKind = 'render' | 'image' | 'clip' | 'video' | 'project';

export type RealtimeEvent =
  /** a job moved: progress while it runs, its status when it ends */
  | { kind: 'job'; job: JobKind; jobId: string; status: string; progress?: number; projectId?: string; draftId?: string; imageId?: string }
  | { kind: 'approval'; approvalId: string; status: 'pending' | 'approved' | 'rejected' | 'expired'; contentType?: string; projectId?: string }
  /** the balance or the reserved credits changed */
  | { kind: 'credits' }
  | { kind: 'content'; change: 'added' | 'updated' | 'removed'; contentKind: ContentKind; projectId?: string; itemId?: string }
  /** the workspace's members, roles, invitations or name changed (the Members page and the switcher re-read) */
  | { kind: 'workspace'; change: 'members' | 'invitations' | 'renamed' | 'settings'; workspaceId: string }
  /** a member who cannot buy asks the workspace's owners and admins for credits (their open apps say so) */
  | { kind: 'workspace'; change: 'credit-request'; workspaceId: string; requestedBy: string }
  /** an item's comment threads changed (a thread or reply added, a comment edited or deleted, a thread resolved or reopened) */
  | { kind: 'comments'; itemId: string; threadId: string; change: 'created' | 'updated' | 'deleted' | 'resolved' | 'reopened' }
  /** these members have a new notification (the bell re-reads its list) */
  | { kind: 'notification'; userIds: string[] }
  /** an endpoint's delivery log changed (an attempt was recorded), or the endpoint was disabled for failing (410, 3 days) */
  | { kind: 'webhook'; change: 'deliveries' | 'disabled'; workspaceId: string; endpointId: string };

export type RealtimeEventKind = RealtimeEvent['kind'];

/** What the stream sends for each event (`data:` of an SSE message whose `event:` is the kind, `id:` the id). */
export type DeliveredEvent = RealtimeEvent & { id: string };

/** The stream's own message names besides the event kinds. */
export const STREAM_READY_EVENT = 'ready';

/** The stream's last message when its session ended (signed out, expired, revoked): the browser is signed out. */
export const STREAM_SESSION_ENDED_EVENT = 'session-ended';

/** The stream's last message when its user is no longer a member of the stream's workspace (removed, left, deleted). */
export const STREAM_WORKSPACE_ENDED_EVENT = 'workspace-ended';
