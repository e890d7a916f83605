/**
 * Activity inputs name the owning workspace `workspaceId`. An activity scheduled before that name was chosen, by a
 * run still going, carries it as `userId` (it always held the workspace's id); its next attempt gets it under the new
 * name too, so the run finishes. The workflows do the same for their own inputs (domain/workflowContracts/workspaceInput.ts).
 */
import { withLegacyWorkspaceId } from '../domain/workflowContracts/workspaceInput';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type ActivityFunctions = Record<string, (...args: any[]) => Promise<unknown>>;

export function acceptingLegacyWorkspaceInput<T extends ActivityFunctions>(activities: T): T {
  const wrapped: ActivityFunctions = {};
  for (const [name, activity] of Object.entries(activities)) {
    wrapped[name] = (input: unknown, ...rest: unknown[]) => activity(withLegacyWorkspaceId(input), ...rest);
  }
  return wrapped as T;
}
