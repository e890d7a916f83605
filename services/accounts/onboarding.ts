import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Logger } from '../../config/logger';
import type { Platform, VideoEffect } from '../../domain/constants';
import { TASK_QUEUES } from '../../domain/taskQueues';
import {
  ONBOARDING_MESSAGES,
  hasTryItData,
  onboardingStateQuery,
  onboardingWorkflowId,
  type OnboardingState,
  type TryItOnboardingInput,
  type TryItOnboardingResult,
} from '../../domain/workflowContracts/tryItOnboarding';
import { jobSearchAttributes } from '../../domain/searchAttributes';

/** The workflow's signature (workflows/tryItOnboarding.ts), started by its type name: services do not import workflows. */
type TryItOnboardingWorkflow = (input: TryItOnboardingInput) => Promise<TryItOnboardingResult>;

/**
 * Runs try-it onboarding for a user who just signed up and waits for its result (a few database writes).
 * A repeated call while a run is open joins it; a later call re-runs it and gets the same project back.
 */
export async function runTryItOnboarding(
  client: Client,
  input: TryItOnboardingInput,
  taskQueue: string = TASK_QUEUES.onboarding,
): Promise<TryItOnboardingResult> {
  const handle = await client.workflow.start<TryItOnboardingWorkflow>('tryItOnboardingWorkflow', {
    taskQueue,
    workflowId: onboardingWorkflowId(input.userId),
    workflowIdConflictPolicy: 'USE_EXISTING',
    typedSearchAttributes: jobSearchAttributes({ workspaceId: input.userId, kind: 'onboarding', itemId: input.userId }),
    args: [input],
  });
  return handle.result();
}

/** The latest onboarding run's state for a user, or null when there never was one. */
export async function getOnboardingState(client: Client, userId: string): Promise<OnboardingState | null> {
  try {
    return await client.workflow.getHandle(onboardingWorkflowId(userId)).query(onboardingStateQuery);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return null;
    throw err;
  }
}

/** How long POST /api/onboarding/try-it waits for the run (normally a few database writes) before giving up. */
export const ONBOARDING_WAIT_MS = 30_000;

/** What the browser sends after signup or sign-in: the choices it saved in the try-it area. */
export interface TryItRequest {
  fileName: string;
  platform: Platform | null;
  effect: VideoEffect | null;
}

/** The spec's shape, plus a code on failures so a client can tell them apart. */
export interface TryItReply {
  status: number;
  body: TryItOnboardingResult & { code?: string };
}

export interface TryItOnboardingServiceDeps {
  temporal: () => Promise<Client>;
  taskQueue: string;
  logger: Logger;
  waitMs?: number;
}

const FAILURE_STATUS: Record<string, { status: number; code: string }> = {
  [ONBOARDING_MESSAGES.noData]: { status: 400, code: 'NO_TRY_IT_DATA' },
  [ONBOARDING_MESSAGES.profileFailed]: { status: 500, code: 'PROFILE_FAILED' },
  [ONBOARDING_MESSAGES.projectFailed]: { status: 500, code: 'PROJECT_FAILED' },
};

function failed(error: string, status: number, code: string): TryItReply {
  return { status, body: { success: false, projectId: null, projectName: null, error, code } };
}

/**
 * Turns the signed-in user's try-it choices into their first project through the onboarding workflow
 * (`onboarding-<userId>`). The answer's failures are the spec's texts; nothing internal reaches the client.
 */
export class TryItOnboardingService {
  constructor(private readonly deps: TryItOnboardingServiceDeps) {}

  async run(userId: string, request: TryItRequest): Promise<TryItReply> {
    const input: TryItOnboardingInput = { userId, fileName: request.fileName, platform: request.platform, effect: request.effect };
    // refused here rather than by a workflow run: nothing to start for an empty request
    if (!hasTryItData(input)) return failed(ONBOARDING_MESSAGES.noData, 400, 'NO_TRY_IT_DATA');

    let result: TryItOnboardingResult;
    try {
      const client = await this.deps.temporal();
      // the deadline bounds the wait only: a run that is still queued (no worker yet) finishes later, and the
      // client's next call joins it or gets the same project back
      result = await client.withDeadline(Date.now() + (this.deps.waitMs ?? ONBOARDING_WAIT_MS), () =>
        runTryItOnboarding(client, input, this.deps.taskQueue),
      );
    } catch (err) {
      this.deps.logger.error({ err, userId }, 'try-it onboarding did not answer');
      return failed(ONBOARDING_MESSAGES.projectFailed, 503, 'ONBOARDING_UNAVAILABLE');
    }
    if (result.success) return { status: 200, body: result };
    const error = result.error ?? ONBOARDING_MESSAGES.projectFailed;
    const mapped = FAILURE_STATUS[error] ?? FAILURE_STATUS[ONBOARDING_MESSAGES.projectFailed];
    if (mapped.status >= 500) this.deps.logger.error({ userId, error }, 'try-it onboarding failed');
    return failed(error, mapped.status, mapped.code);
  }
}
