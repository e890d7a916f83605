/**
 * POST /api/onboarding/try-it against the run's Temporal dev server and PostgreSQL: the route starts
 * `onboarding-<userId>` on a task queue of this file's own, polled by a real worker with the real activities.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import sharp from 'sharp';
import { createOnboardingActivities, onboardingProjectId } from '../../activities/onboarding';
import { createApp } from '../../api/app';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { TRY_IT_MESSAGES } from '../../domain/tryIt';
import { TryItOnboardingService } from '../../services/accounts/onboarding';
import { onboardingWorkflowId } from '../../workflows';
import { quietRuntime } from '../imageEdit/harness';
import { createTestUser, type TestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';
import { testClient, uniqueTaskQueue, withWorker } from '../support/temporal';

interface TryItAnswer {
  success: boolean;
  projectId: string | null;
  projectName: string | null;
  error: string | null;
  code?: string;
}

const taskQueue = uniqueTaskQueue('onboarding-api');
const workerOptions = () => ({ taskQueue, activities: createOnboardingActivities({ knex: testKnex() }) });

let server: TestServer;
let client: Client;
let closeClient: () => Promise<void>;

beforeAll(async () => {
  quietRuntime();
  server = await serve(createApp({ config: loadConfig(), knex: testKnex(), logger, taskQueues: { onboarding: taskQueue } }));
  ({ client, close: closeClient } = await testClient());
});

afterAll(async () => {
  await server.close();
  await closeClient();
  await closeTestKnex();
});

function tryIt(user: TestUser | null, json: unknown) {
  return request<TryItAnswer>(server.baseUrl, '/api/onboarding/try-it', { method: 'POST', token: user?.token, json });
}

async function projectsOf(userId: string): Promise<Array<{ id: string; name: string }>> {
  return testKnex()('projects').where({ workspace_id: userId }).orderBy('created_at').select('id', 'name');
}

async function workflowExists(userId: string): Promise<boolean> {
  try {
    await client.workflow.getHandle(onboardingWorkflowId(userId)).describe();
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

describe('POST /api/onboarding/try-it', () => {
  it('needs a session', async () => {
    const res = await tryIt(null, { fileName: 'house.jpg', platform: 'YouTube', effect: 'Zoom In' });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ success: false, error: 'Authentication required' });
  });

  it('answers 400 with a clear message for bad input, and starts nothing', async () => {
    const user = await createTestUser(server.baseUrl);
    const cases: Array<[unknown, string | RegExp]> = [
      [{ platform: 'YouTube', effect: 'Zoom In' }, 'fileName is required'],
      [{ fileName: 42, platform: 'YouTube' }, 'fileName must be text'],
      [{ fileName: `${'a'.repeat(256)}.jpg` }, 'fileName must be at most 255 characters'],
      [{ fileName: 'house.jpg', platform: 'MySpace' }, /^Unknown platform "MySpace"/],
      [{ fileName: 'house.jpg', effect: 'Spin Around' }, /^Unknown video effect "Spin Around"/],
      [{ fileName: 'house.jpg', effect: 7 }, 'effect must be text'],
      [{ fileName: '   ', platform: null, effect: null }, TRY_IT_MESSAGES.noData],
      [[], /./],
    ];
    for (const [body, message] of cases) {
      const res = await tryIt(user, body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expect(res.body.success).toBe(false);
      expect(res.body.error).toEqual(typeof message === 'string' ? message : expect.stringMatching(message));
    }
    const empty = await tryIt(user, { fileName: '', platform: '', effect: '' });
    expect(empty.body).toEqual({ success: false, projectId: null, projectName: null, error: TRY_IT_MESSAGES.noData, code: 'NO_TRY_IT_DATA' });
    expect(await projectsOf(user.id)).toEqual([]);
    expect(await workflowExists(user.id)).toBe(false);
  });

  it('creates the first project from the choices on the configured queue, then takes the image as its first render', async () => {
    const user = await createTestUser(server.baseUrl);
    const res = await withWorker(workerOptions(), () => tryIt(user, { fileName: 'harbour_view-render.png', platform: 'tiktok', effect: 'drone-shot', userId: user.id }));

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, projectId: onboardingProjectId(user.id), projectName: 'harbour view render', error: null });
    expect(await projectsOf(user.id)).toEqual([{ id: onboardingProjectId(user.id), name: 'harbour view render' }]);
    const description = await client.workflow.getHandle(onboardingWorkflowId(user.id)).describe();
    expect(description.taskQueue).toBe(taskQueue);
    expect(description.status.name).toBe('COMPLETED');

    // what the browser does next: the saved image goes up as the project's first render
    const form = new FormData();
    form.append('projectId', res.body.projectId!);
    form.append('userId', user.id);
    const png = await sharp({ create: { width: 96, height: 54, channels: 3, background: { r: 40, g: 90, b: 160 } } }).png().toBuffer();
    form.append('file', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'harbour_view-render.png');
    const upload = await request(server.baseUrl, '/api/upload/renders', { method: 'POST', token: user.token, body: form });
    expect(upload.status).toBe(200);
    const renders = await testKnex()('renders').where({ project_id: res.body.projectId }).select('file_name');
    expect(renders).toEqual([{ file_name: 'harbour_view-render.png' }]);
  });

  it('is idempotent: two calls give one project, and another user is never touched', async () => {
    const owner = await createTestUser(server.baseUrl);
    const other = await createTestUser(server.baseUrl);
    const othersProject = await request<{ project: { id: string } }>(server.baseUrl, '/api/projects', { token: other.token, json: { name: 'Other Tower' } });
    expect(othersProject.status).toBe(201);

    const [first, second, foreign] = await withWorker(workerOptions(), async () => [
      await tryIt(owner, { fileName: 'IMG_0042.png', platform: 'YouTube', effect: 'Zoom In' }),
      await tryIt(owner, { fileName: 'IMG_0042.png', platform: 'YouTube', effect: 'Zoom In' }),
      // acting for the owner from the other user's session is refused before anything starts
      await tryIt(other, { fileName: 'stolen.png', platform: 'Square', effect: 'Pan Left', userId: owner.id }),
    ]);

    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(await projectsOf(owner.id)).toEqual([{ id: first.body.projectId, name: 'IMG 0042' }]);

    expect(foreign.status).toBe(403);
    expect(foreign.body).toMatchObject({ success: false, error: 'You do not have permission to act for another user' });
    expect(await projectsOf(other.id)).toEqual([{ id: othersProject.body.project.id, name: 'Other Tower' }]);
    expect(await workflowExists(other.id)).toBe(false);
  });

  it("answers the spec's 'Failed to create user profile' when the user has no profile", async () => {
    const user = await createTestUser(server.baseUrl);
    await testKnex()('profiles').where({ id: user.id }).delete();

    const res = await withWorker(workerOptions(), () => tryIt(user, { fileName: 'house.jpg', platform: 'Instagram', effect: 'Walk Through' }));

    expect(res.status).toBe(500);
    expect(res.body).toEqual({ success: false, projectId: null, projectName: null, error: TRY_IT_MESSAGES.profileFailed, code: 'PROFILE_FAILED' });
    expect(await projectsOf(user.id)).toEqual([]);
  });
});

describe('TryItOnboardingService when no worker answers in time', () => {
  it("answers 'Failed to create project' after the wait, and a later call gets the project the queued run made", async () => {
    const queue = uniqueTaskQueue('onboarding-late');
    const service = new TryItOnboardingService({ temporal: async () => client, taskQueue: queue, logger, waitMs: 1500 });
    const user = await createTestUser(server.baseUrl);
    const request = { fileName: 'late-house.webp', platform: 'Facebook' as const, effect: 'Day to Night' as const };

    // no worker polls this queue, so only the end of the service's wait can answer (how long that takes is not tested)
    const late = await service.run(user.id, request);
    expect(late).toEqual({
      status: 503,
      body: { success: false, projectId: null, projectName: null, error: TRY_IT_MESSAGES.projectFailed, code: 'ONBOARDING_UNAVAILABLE' },
    });
    expect(await projectsOf(user.id)).toEqual([]);

    // the later call waits as long as the product does (a worker starting on a loaded machine can take seconds)
    const patient = new TryItOnboardingService({ temporal: async () => client, taskQueue: queue, logger });
    const retried = await withWorker({ taskQueue: queue, activities: createOnboardingActivities({ knex: testKnex() }) }, () => patient.run(user.id, request));
    expect(retried).toEqual({ status: 200, body: { success: true, projectId: onboardingProjectId(user.id), projectName: 'late house', error: null } });
    expect(await projectsOf(user.id)).toHaveLength(1);
  });
});
