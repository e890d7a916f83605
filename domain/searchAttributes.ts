/**
 * The custom search attributes every run carries, so an operator filters runs by workspace, user, project, kind or item
 * in the Temporal UI and CLI (`temporal workflow list --query "RsWorkspaceId='<id>'"`).
 *
 * - RsWorkspaceId: the workspace the run works for (the account = the workspace, DESIGN.md "Teams (workspaces)"; a
 *   personal workspace's id is its owner's user id);
 * - RsUserId: the user who started it (the acting member); for a run no member started (an account's export or
 *   deletion, onboarding, a refund) the account's own id, as before workspaces.
 *
 * Metrics are never labelled by these (unbounded label sets): they are for finding runs, not for counting them. Defined once here: the client starts,
 * the child starts inside workflows, the registration at start-up (services/platform/searchAttributes.ts) and the compose
 * set-up (docker-compose.yml) all use these names. Deterministic: safe to import from workflow code.
 */
import { defineSearchAttributeKey, SearchAttributeType, type SearchAttributePair, type TypedSearchAttributes } from '@temporalio/common';

export const RS_WORKSPACE_ID = defineSearchAttributeKey('RsWorkspaceId', SearchAttributeType.KEYWORD);
export const RS_USER_ID = defineSearchAttributeKey('RsUserId', SearchAttributeType.KEYWORD);
export const RS_PROJECT_ID = defineSearchAttributeKey('RsProjectId', SearchAttributeType.KEYWORD);
export const RS_JOB_KIND = defineSearchAttributeKey('RsJobKind', SearchAttributeType.KEYWORD);
export const RS_ITEM_ID = defineSearchAttributeKey('RsItemId', SearchAttributeType.KEYWORD);

/** Every key with its type, for registering them on a namespace. */
export const RS_SEARCH_ATTRIBUTES = [RS_USER_ID, RS_PROJECT_ID, RS_JOB_KIND, RS_ITEM_ID, RS_WORKSPACE_ID] as const;

/** What each kind of run is, as RsJobKind says it. */
export type JobKind = 'clip' | 'image-edit' | 'assembly' | 'approval' | 'export' | 'account-deletion' | 'onboarding' | 'draft-job' | 'payment-refund';

export interface JobSearchAttributes {
  /** The account the run works for, which is its workspace (RsWorkspaceId). */
  workspaceId: string;
  /** The member who started it (RsUserId); the account's id when absent. */
  actorId?: string | null;
  kind: JobKind;
  /** The job's own id (clip job, image edit job, approval, export); the user id for per-user runs. */
  itemId: string;
  projectId?: string | null;
}

/** The typed search attributes of one run (RsProjectId only when the job belongs to a project). */
export function jobSearchAttributes({ workspaceId, actorId, kind, itemId, projectId }: JobSearchAttributes): SearchAttributePair[] {
  const pairs: SearchAttributePair[] = [
    { key: RS_WORKSPACE_ID, value: workspaceId },
    { key: RS_USER_ID, value: actorId || workspaceId },
    { key: RS_JOB_KIND, value: kind },
    { key: RS_ITEM_ID, value: itemId },
  ];
  if (projectId) pairs.push({ key: RS_PROJECT_ID, value: projectId });
  return pairs;
}

/**
 * A child's attributes, set only when its parent carries them: a parent started without them runs on a server that
 * has none registered (the time-skipping test server knows no custom attributes and refuses any start that sets one).
 */
export function childSearchAttributes(parent: TypedSearchAttributes, child: JobSearchAttributes): SearchAttributePair[] {
  return parent.get(RS_USER_ID) === undefined ? [] : jobSearchAttributes(child);
}
