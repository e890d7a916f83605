/**
 * The assembly workflow's versions replay (issue 44 item 4, the `assembly-formats` patch): a history recorded before
 * formats (one format, renderAssembly, no patch marker) replays on the code of now, and so does a history recorded
 * now of an assembly in two formats (renderAssemblyFormats, an approval item per format).
 * The old fixture was recorded from the code before formats (commit b905a6b): a 2-clip portrait assembly.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import type { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { ASSEMBLY_FORMATS_PATCH, assemblyWorkflowId } from '../../workflows/assembly';
import { startClipWorker, type RunningWorker } from '../clips/fixtures';
import { closeTestKnex } from '../support/db';
import { testClient } from '../support/temporal';
import { assemble, assemblyUser, removeFixtures, startAssemblyApp, storeClip, waitForAssembly, type AssemblyTestApp } from './fixtures';

type History = temporal.api.history.v1.IHistory;
const BEFORE_FORMATS = path.join(__dirname, 'fixtures-history', 'assembly-before-formats.history.json');

function bundle(): { workflowBundle: { codePath: string } } {
  const codePath = process.env.TEST_WORKFLOW_BUNDLE_PATH;
  if (!codePath) throw new Error('TEST_WORKFLOW_BUNDLE_PATH is not set: globalSetup builds it from workflows/index.ts');
  return { workflowBundle: { codePath } };
}

function patchesOf(history: History): string[] {
  return (history.events ?? []).flatMap((e) => {
    const marker = e.markerRecordedEventAttributes;
    if (marker?.markerName !== 'core_patch') return [];
    const data = marker.details?.['patch-data']?.payloads?.[0]?.data;
    return data ? [(JSON.parse(Buffer.from(data).toString('utf8')) as { id: string }).id] : [];
  });
}

function activityTypes(history: History): string[] {
  return (history.events ?? []).flatMap((e) => {
    const name = e.activityTaskScheduledEventAttributes?.activityType?.name;
    return name ? [name] : [];
  });
}

describe('assembly workflow replay across the formats patch', () => {
  let app: AssemblyTestApp;
  let worker: RunningWorker;
  let client: Client;
  let closeClient: () => Promise<void>;

  beforeAll(async () => {
    app = await startAssemblyApp();
    worker = await startClipWorker(app.taskQueue, { config: app.config });
    ({ client, close: closeClient } = await testClient());
  });

  afterAll(async () => {
    await worker?.stop();
    await closeClient?.();
    await app?.close();
    await removeFixtures();
    await closeTestKnex();
  });

  it('replays a history recorded before formats', async () => {
    const history = historyFromJSON(JSON.parse(fs.readFileSync(BEFORE_FORMATS, 'utf8')));
    expect(patchesOf(history)).toEqual([]);
    expect(activityTypes(history)).toContain('renderAssembly');
    expect(activityTypes(history)).not.toContain('renderAssemblyFormats');
    await expect(Worker.runReplayHistory(bundle(), history, 'assembly-before-formats-fixture')).resolves.toBeUndefined();
  }, 60_000);

  it('replays a history of two formats recorded now', async () => {
    const user = await assemblyUser(app.baseUrl);
    const clipIds: string[] = [];
    for (let i = 0; i < 2; i += 1) clipIds.push((await storeClip(app.config, user, { orientation: 'landscape', index: i, seconds: 1 })).id);
    const res = await assemble(app.baseUrl, user, clipIds, { platform: 'youtube', formats: ['16:9', '4:5'] });
    expect(res.status).toBe(200);
    const jobId = res.body.jobId as string;
    const { job } = await waitForAssembly(app.baseUrl, user, jobId, { timeoutMs: 200_000 });
    expect(job.status).toBe('completed');
    const workflowId = assemblyWorkflowId(jobId);
    const history = await client.workflow.getHandle(workflowId).fetchHistory();
    expect(patchesOf(history)).toEqual([ASSEMBLY_FORMATS_PATCH]);
    const types = activityTypes(history);
    expect(types.filter((t) => t === 'renderAssemblyFormats')).toHaveLength(1);
    expect(types.filter((t) => t === 'createPendingApproval')).toHaveLength(2);
    await expect(Worker.runReplayHistory(bundle(), history, workflowId)).resolves.toBeUndefined();
  }, 240_000);
});
