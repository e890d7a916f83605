import type { Client } from '@temporalio/client';
import { accountDeletionWorkflowId } from '../../domain/accountData';
import type { AccountDeletionResult } from '../../workflows';
import { assemblyWorkflowId } from '../../workflows/assembly';
import { storagePathsContaining } from '../accountData/support/accountDataApp';
import { startClipWorker, type RunningWorker } from '../clips/fixtures';
import { closeTestKnex, testKnex } from '../support/db';
import { request } from '../support/http';
import { testClient } from '../support/temporal';
import { assemble, assemblyUser, removeFixtures, startAssemblyApp, storeClip, waitForAssembly, type AssemblyTestApp } from './fixtures';

describe('account deletion while an assembly renders', () => {
  let app: AssemblyTestApp;
  let worker: RunningWorker;
  let client: Client;
  let closeClient: () => Promise<void>;

  beforeAll(async () => {
    // x264 at veryslow keeps a 1080p render of a few seconds busy long enough to delete the account during it
    app = await startAssemblyApp({ config: { videoPreset: 'veryslow' } });
    worker = await startClipWorker(app.taskQueue, { config: app.config });
    ({ client, close: closeClient } = await testClient());
  });

  afterAll(async () => {
    await worker?.stop();
    await app?.close();
    await closeClient?.();
    await removeFixtures();
    await closeTestKnex();
  });

  it('cancels the running assembly, which removes what it made; nothing of the user is left, the other user keeps theirs', async () => {
    const user = await assemblyUser(app.baseUrl);
    const other = await assemblyUser(app.baseUrl);
    const clips = [];
    for (let i = 0; i < 4; i += 1) clips.push(await storeClip(app.config, user, { index: i, seconds: 2 }));
    const otherClip = await storeClip(app.config, other, { index: 0, seconds: 1 });

    const started = await assemble(app.baseUrl, user, clips.map((c) => c.id));
    expect(started.status).toBe(200);
    const jobId = started.body.jobId as string;
    await waitForAssembly(app.baseUrl, user, jobId, { intervalMs: 200, until: (job) => job.status === 'processing' && job.progress > 10 });

    const res = await request<{ success: boolean; workflowId?: string }>(app.baseUrl, '/api/account/delete', { token: user.token, json: { confirmEmail: user.email } });
    expect(res.status).toBe(202);
    const result: AccountDeletionResult = await client.workflow.getHandle(accountDeletionWorkflowId(user.id)).result();
    expect(result.deletedUser).toBe(true);
    expect(result.cancelledWorkflows).toBeGreaterThanOrEqual(1);

    // the render was stopped, not finished: the run is cancelled, its clean-up ran and it handed nothing to approval
    const assembly = client.workflow.getHandle(assemblyWorkflowId(jobId));
    expect((await assembly.describe()).status.name).toBe('CANCELLED');
    const history = await assembly.fetchHistory();
    const activities = (history.events ?? []).map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter(Boolean);
    expect(activities).toContain('abandonAssemblyJob');
    expect(await testKnex()('assembly_jobs').where({ workspace_id: user.id })).toEqual([]);
    expect(await testKnex()('compiled_videos').where({ workspace_id: user.id })).toEqual([]);
    expect(await testKnex()('pending_approvals').where({ workspace_id: user.id })).toEqual([]);
    expect(await storagePathsContaining(user.id)).toEqual([]);
    expect(await storagePathsContaining(jobId)).toEqual([]);

    // the other account is untouched
    expect(await testKnex()('clips').where({ id: otherClip.id }).first('id')).toEqual({ id: otherClip.id });
    expect((await storagePathsContaining(other.id)).length).toBeGreaterThanOrEqual(1);
  }, 240_000);
});
