/**
 * A workflow interceptor for the worker-crash tests (tests/support/workflowBundles.ts bundles it in): every activity
 * that heartbeats is scheduled with a heartbeat timeout of CRASH_TEST_HEARTBEAT instead of the workflow's (a minute),
 * and the one-look status call of a hosted clip (checkClipVideo, a single HTTP request) with that start-to-close
 * timeout instead of a minute. A SIGKILLed worker's activity is given up, and retried on the new worker, after that
 * time instead of a minute of waiting; what the tests check (the retry resumes the same work, everything after it
 * happens once) is the same.
 */
import type { ActivityInput, Next, WorkflowInterceptorsFactory, WorkflowOutboundCallsInterceptor } from '@temporalio/workflow';

/** Long enough for heartbeats on a busy machine (the SDK sends them at most every 0.8 x the timeout). */
export const CRASH_TEST_HEARTBEAT = '15 seconds';

/** Activities that make one short call and return: a killed worker's attempt is given up after CRASH_TEST_HEARTBEAT. */
const ONE_LOOK_ACTIVITIES = new Set(['checkClipVideo']);

export const interceptors: WorkflowInterceptorsFactory = () => ({
  outbound: [
    {
      scheduleActivity(input: ActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleActivity'>) {
        if (input.options.heartbeatTimeout) return next({ ...input, options: { ...input.options, heartbeatTimeout: CRASH_TEST_HEARTBEAT } });
        if (ONE_LOOK_ACTIVITIES.has(input.activityType)) return next({ ...input, options: { ...input.options, startToCloseTimeout: CRASH_TEST_HEARTBEAT } });
        return next(input);
      },
    },
  ],
});
