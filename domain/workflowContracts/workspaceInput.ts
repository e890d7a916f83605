/**
 * Workflow inputs name the owning workspace `workspaceId`. Runs started before that name was chosen recorded it as
 * `userId` (it always held the workspace's id); a workflow reads its workspace through `workspaceIdOf`, so those
 * histories replay and finish unchanged.
 */
export interface WorkspaceInput {
  workspaceId: string;
  /** The same id under its old name, in inputs recorded before the rename. Never written. */
  userId?: string;
}

export function workspaceIdOf(input: WorkspaceInput): string {
  const id = input.workspaceId ?? input.userId;
  if (!id) throw new TypeError('workflow input names no workspace');
  return id;
}

/**
 * An activity's input with `workspaceId` set from the old `userId` where only that is there (an activity scheduled
 * before the rename); any other value as given.
 */
export function withLegacyWorkspaceId(input: unknown): unknown {
  if (input === null || typeof input !== 'object' || Array.isArray(input) || 'workspaceId' in input) return input;
  const legacy = (input as { userId?: unknown }).userId;
  return typeof legacy === 'string' ? { ...input, workspaceId: legacy } : input;
}
