/**
 * The image edit workflow's versions replay: a history recorded just now (one media activity, local record
 * activities) and a committed history recorded before the `image-edit-one-media-step` patch (three media
 * activities, regular record activities), so an edit running during a deploy finishes on the new code.
 * Re-record the old fixture only from the old code: IMAGE_EDIT_RECORD_HISTORY=<file> writes this run's history.
 */
import fs from 'node:fs';
import path from 'node:path';
import { historyFromJSON, historyToJSON } from '@temporalio/common/lib/proto-utils';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { imageEditWorkflowId } from '../../domain/imageEdit';
import { closeTestKnex } from '../support/db';
import { generateImage, startHarness, userWithRender, type Harness } from './harness';

type History = temporal.api.history.v1.IHistory;
const FIXTURE = path.join(__dirname, 'fixtures', 'imageEdit-three-media-steps.history.json');

function bundle(): { workflowBundle: { codePath: string } } {
  const codePath = process.env.WORKFLOW_BUNDLE_PATH;
  if (!codePath) throw new Error('WORKFLOW_BUNDLE_PATH is not set: globalSetup builds it from workflows/index.ts');
  return { workflowBundle: { codePath } };
}

function activityTypes(history: History): string[] {
  return (history.events ?? []).flatMap((e) => (e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes.activityType?.name ?? ''] : []));
}

let h: Harness;

beforeAll(async () => {
  h = await startHarness('replay');
});

afterAll(async () => {
  await h?.close();
  await closeTestKnex();
});

describe('replaying image edit histories', () => {
  it('replays a history recorded just now (one media activity)', async () => {
    const { user, renderId } = await userWithRender(h.baseUrl);
    const res = await generateImage(h.baseUrl, user, { baseImage: renderId, prompt: 'golden hour glow' });
    expect(res.status).toBe(200);
    const workflowId = imageEditWorkflowId(res.body.metadata.jobId);
    const history = await h.client.workflow.getHandle(workflowId).fetchHistory();
    if (process.env.IMAGE_EDIT_RECORD_HISTORY) fs.writeFileSync(process.env.IMAGE_EDIT_RECORD_HISTORY, `${historyToJSON(history)}\n`);

    expect(activityTypes(history)).toEqual(['makeEditedImage']);
    await expect(Worker.runReplayHistory(bundle(), history, workflowId)).resolves.toBeUndefined();
  }, 120_000);

  it('replays a history recorded before the patch along the old path', async () => {
    const history = historyFromJSON(JSON.parse(fs.readFileSync(FIXTURE, 'utf8')));
    expect(activityTypes(history)).toEqual([
      'reserveImageEditCredits',
      'refineImagePrompt',
      'generateEditedImage',
      'upscaleEditedImage',
      'renderImagePreviews',
      'recordImageEdit',
      'createPendingApproval',
    ]);
    await expect(Worker.runReplayHistory(bundle(), history, 'image-edit-fixture')).resolves.toBeUndefined();
  }, 60_000);
});
