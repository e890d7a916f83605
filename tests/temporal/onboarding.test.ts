import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { createOnboardingActivities } from '../../activities/onboarding';
import { getOnboardingState, runTryItOnboarding } from '../../services/accounts/onboarding';
import { ONBOARDING_MESSAGES, onboardingWorkflowId, type TryItOnboardingInput } from '../../workflows';
import { closeTestKnex, testKnex } from '../support/db';
import { testClient, uniqueTaskQueue, withWorker } from '../support/temporal';
import { createPersonalWorkspace } from '../../services/workspaces/personalWorkspace';

async function createUserWithProfile(): Promise<string> {
  const knex = testKnex();
  const email = `onboarding-${randomUUID()}@example.com`;
  const [user] = await knex('users').insert({ email, password_hash: 'scrypt$test' }).returning<{ id: string }[]>('id');
  await createPersonalWorkspace(knex, { id: user.id, email, name: 'Onboarding Tester' });
  await knex('profiles').where({ id: user.id }).update({ credits: 5 });
  return user.id;
}

async function projectsOf(userId: string): Promise<{ id: string; name: string }[]> {
  return testKnex()('projects').where({ workspace_id: userId }).select('id', 'name');
}

describe('try-it onboarding workflow (dev server, real worker, PostgreSQL)', () => {
  let client: Client;
  let closeClient: () => Promise<void>;
  // only what the onboarding workflow calls; the full createActivities set is exercised by workerMain.test.ts
  const workerOptions = (taskQueue: string) => ({ taskQueue, activities: createOnboardingActivities({ knex: testKnex() }) });

  beforeAll(async () => {
    ({ client, close: closeClient } = await testClient());
  });

  afterAll(async () => {
    await closeClient();
    await closeTestKnex();
  });

  it('creates the first project named after the try-it file and reports it by result and query', async () => {
    const userId = await createUserWithProfile();
    const taskQueue = uniqueTaskQueue('onboarding');
    const input: TryItOnboardingInput = { userId, fileName: 'harbour_view-render.jpg', platform: 'TikTok', effect: 'Drone Shot' };

    const { result, state } = await withWorker(workerOptions(taskQueue), async () => {
      const result = await runTryItOnboarding(client, input, taskQueue);
      return { result, state: await getOnboardingState(client, userId) };
    });

    expect(result).toEqual({ success: true, projectId: expect.any(String), projectName: 'harbour view render', error: null });
    expect(await projectsOf(userId)).toEqual([{ id: result.projectId, name: 'harbour view render' }]);
    expect(state).toEqual({ status: 'completed', progress: 100, message: 'Created harbour view render', error: null, result });
    const description = await client.workflow.getHandle(onboardingWorkflowId(userId)).describe();
    expect(description.workflowId).toBe(`onboarding-${userId}`);
    expect(description.taskQueue).toBe(taskQueue);
  });

  it('run twice with the same input leaves one project and answers the same project both times', async () => {
    const userId = await createUserWithProfile();
    const taskQueue = uniqueTaskQueue('onboarding');
    const input: TryItOnboardingInput = { userId, fileName: 'IMG_0042.png', platform: 'YouTube', effect: 'Zoom In' };

    const [first, second] = await withWorker(workerOptions(taskQueue), async () => [
      await runTryItOnboarding(client, input, taskQueue),
      await runTryItOnboarding(client, input, taskQueue),
    ]);

    expect(first.success).toBe(true);
    expect(second).toEqual(first);
    expect(await projectsOf(userId)).toHaveLength(1);
    const runs = [];
    for await (const run of client.workflow.list({ query: `WorkflowId = '${onboardingWorkflowId(userId)}'` })) runs.push(run);
    expect(runs).toHaveLength(2);
  });

  it('ends with "Failed to create user profile" and writes nothing when the user has no profile', async () => {
    const userId = randomUUID();
    const taskQueue = uniqueTaskQueue('onboarding');

    const result = await withWorker(workerOptions(taskQueue), () =>
      runTryItOnboarding(client, { userId, fileName: 'house.jpg', platform: null, effect: null }, taskQueue),
    );

    expect(result).toEqual({ success: false, projectId: null, projectName: null, error: ONBOARDING_MESSAGES.profileFailed });
    // not retried: the failure is marked non-retryable, so each activity of the run was tried once (read from the
    // run's history rather than from how long the answer took)
    const history = await client.workflow.getHandle(onboardingWorkflowId(userId)).fetchHistory();
    const attempts = (history.events ?? []).flatMap((e) => (e.activityTaskStartedEventAttributes ? [Number(e.activityTaskStartedEventAttributes.attempt)] : []));
    expect(attempts.length).toBeGreaterThan(0);
    expect(attempts.every((a) => a === 1)).toBe(true);
    expect(await projectsOf(userId)).toEqual([]);
  });

  it('answers "No try-it data found" without touching the database when nothing was chosen', async () => {
    const userId = await createUserWithProfile();
    const taskQueue = uniqueTaskQueue('onboarding');

    const result = await withWorker(workerOptions(taskQueue), () =>
      runTryItOnboarding(client, { userId, fileName: '  ', platform: null, effect: null }, taskQueue),
    );

    expect(result).toEqual({ success: false, projectId: null, projectName: null, error: ONBOARDING_MESSAGES.noData });
    expect(await projectsOf(userId)).toEqual([]);
  });
});
