/**
 * The project is deleted while its image edit waits for a worker: the run fails cleanly with the project's
 * 'not found' (its source render went with it), the credit comes back, and nothing is left pending.
 */
import { closeTestKnex } from '../support/db';
import { request } from '../support/http';
import { creditState, generateImage, startHarness, startWorkers, userWithRender, type Harness, type RunningWorkers } from './harness';

let h: Harness;
let workers: RunningWorkers | null = null;

beforeAll(async () => {
  h = await startHarness('project-deleted', { workers: false });
});

afterAll(async () => {
  await workers?.stop();
  await h?.close();
  await closeTestKnex();
});

it('releases the credit and answers the failure when the project goes away mid-run', async () => {
  const { user, projectId, renderId } = await userWithRender(h.baseUrl);
  const answer = generateImage(h.baseUrl, user, { baseImage: renderId, projectId });
  // the run is started but no worker polls yet
  let workflowId: string | null = null;
  for (let i = 0; i < 100 && !workflowId; i += 1) {
    for await (const run of h.client.workflow.list({ query: `WorkflowType = 'imageEditWorkflow' AND TaskQueue = '${h.queues.generation}'` })) workflowId = run.workflowId;
    if (!workflowId) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(workflowId).toMatch(/^image-edit-/);
  expect((await request(h.baseUrl, `/api/projects/${projectId}`, { method: 'DELETE', token: user.token })).status).toBe(200);

  workers = await startWorkers(h.queues, h.activities);
  const res = await answer;

  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({ success: false, code: 'INVALID_BASE_IMAGE' });
  expect(await creditState(h.knex, user.id)).toEqual({ credits: 5, reserved: 0 });
  expect(await h.knex('pending_approvals').where({ workspace_id: user.id })).toEqual([]);
  const state = await h.client.workflow.getHandle(workflowId!).describe();
  expect(state.status.name).toBe('FAILED');
  // the failure record could not be written (its project is gone): that did not hide the real failure
  expect(await h.knex('ai_image_edits').where({ workflow_id: workflowId })).toEqual([]);
});
