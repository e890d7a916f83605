/**
 * The image edit workflow's versions replay: a history recorded just now (one media activity, local record
 * activities, the row's progress written beside the steps, the approval workflow started by the step that stores the
 * item) and committed histories: one recorded before the `image-edit-progress-beside-steps` patch (each step's
 * progress written first), one
 * recorded before the `image-edit-status-row` patch (state in memory only, record and item side by side), one
 * before the `image-edit-submit-for-approval` patch (the approval started as a child) and one before the
 * `image-edit-one-media-step` patch (three media activities, regular record activities), so an edit running during a
 * deploy finishes on the new code.
 * Re-record an old fixture only from the old code: IMAGE_EDIT_RECORD_HISTORY=<file> writes this run's history.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { historyFromJSON, historyToJSON } from '@temporalio/common/lib/proto-utils';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { imageEditWorkflowId } from '../../domain/imageEdit';
import { RS_ITEM_ID, RS_JOB_KIND, RS_USER_ID } from '../../domain/searchAttributes';
import { closeTestKnex } from '../support/db';
import { generateImage, startHarness, userWithRender, type Harness } from './harness';

type History = temporal.api.history.v1.IHistory;
const FIXTURE = path.join(__dirname, 'fixtures', 'imageEdit-three-media-steps.history.json');
const CHILD_FIXTURE = path.join(__dirname, 'fixtures', 'imageEdit-approval-child.history.json');
const STATUS_ROW_FIXTURE = path.join(__dirname, 'fixtures', 'imageEdit-before-status-row.history.json');
const PROGRESS_FIRST_FIXTURE = path.join(__dirname, 'fixtures', 'imageEdit-before-progress-beside.history.json');

function bundle(): { workflowBundle: { codePath: string } } {
  const codePath = process.env.TEST_WORKFLOW_BUNDLE_PATH;
  if (!codePath) throw new Error('TEST_WORKFLOW_BUNDLE_PATH is not set: globalSetup builds it from workflows/index.ts');
  return { workflowBundle: { codePath } };
}

/** The local activities a history ran, in the order their markers were recorded. */
function localActivityTypes(history: History): string[] {
  return (history.events ?? []).flatMap((e) => {
    const marker = e.markerRecordedEventAttributes;
    if (marker?.markerName !== 'core_local_activity') return [];
    const data = marker.details?.data?.payloads?.[0]?.data;
    if (!data) return [];
    return [(JSON.parse(Buffer.from(data).toString('utf8')) as { activity_type: string }).activity_type];
  });
}

/** The patch ids a history's workflow marked (core's patch markers). */
function patchesOf(history: History): string[] {
  return (history.events ?? []).flatMap((e) => {
    const marker = e.markerRecordedEventAttributes;
    if (marker?.markerName !== 'core_patch') return [];
    const data = marker.details?.['patch-data']?.payloads?.[0]?.data;
    return data ? [(JSON.parse(Buffer.from(data).toString('utf8')) as { id: string }).id] : [];
  });
}

function childStarts(history: History): number {
  return (history.events ?? []).filter((e) => e.startChildWorkflowExecutionInitiatedEventAttributes).length;
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
    // each step written on the job's row (the status call reads it) beside the step, so the markers of the two come in
    // either order; the item stored, then the row closed last
    const local = localActivityTypes(history);
    expect([...local].sort()).toEqual([
      'markImageEditProgress',
      'markImageEditProgress',
      'markImageEditProgress',
      'markImageEditProgress',
      'markImageEditProgress',
      'recordImageEdit',
      'refineImagePrompt',
      'reserveImageEditCredits',
      'submitForApproval',
    ]);
    expect(local.at(-1)).toBe('recordImageEdit');
    expect(local.indexOf('reserveImageEditCredits')).toBeLessThan(local.indexOf('refineImagePrompt'));
    expect(local.indexOf('refineImagePrompt')).toBeLessThan(local.indexOf('submitForApproval'));
    // fewer workflow tasks wait on a write: the progress writes no longer come one after another before each step
    expect(patchesOf(history)).toContain('image-edit-progress-beside-steps');
    expect(childStarts(history)).toBe(0);
    // the approval workflow runs all the same, with the item's id, and is not a child
    const approval = await h.client.workflow.getHandle(`approval-${res.body.result.savedImage.approvalId}`).describe();
    expect(approval.status.name).toBe('RUNNING');
    expect(approval.parentExecution).toBeUndefined();
    // tagged as a child of the edit would have been (the run's dev server registers the attributes)
    const parent = await h.client.workflow.getHandle(workflowId).describe();
    expect(parent.typedSearchAttributes.get(RS_USER_ID)).toBe(user.id);
    expect(approval.typedSearchAttributes.get(RS_JOB_KIND)).toBe('approval');
    expect(approval.typedSearchAttributes.get(RS_ITEM_ID)).toBe(res.body.result.savedImage.approvalId);
    expect(approval.typedSearchAttributes.get(RS_USER_ID)).toBe(user.id);
    await expect(Worker.runReplayHistory(bundle(), history, workflowId)).resolves.toBeUndefined();
  }, 120_000);

  it("a step's progress write that ends after a later one's, or after the row closed, moves nothing back", async () => {
    const { user, projectId } = await userWithRender(h.baseUrl);
    const workflowId = `image-edit-progress-order-${randomUUID()}`;
    const row = { workflowId, workspaceId: user.id, actorId: user.id, projectId, originalImageUrl: '/api/files/renders/x.jpg', editPrompt: 'dusk', jobId: randomUUID() };
    const read = () => h.knex('ai_image_edits').where({ workflow_id: workflowId }).first('status', 'progress', 'message');
    await h.activities.markImageEditProgress({ ...row, progress: 15, message: 'Refining your prompt' });
    await h.activities.markImageEditProgress({ ...row, progress: 5, message: 'Checking credits' });
    await expect(read()).resolves.toEqual({ status: 'processing', progress: 15, message: 'Refining your prompt' });
    await h.activities.markImageEditProgress({ ...row, progress: 30, message: 'Generating image' });
    await expect(read()).resolves.toEqual({ status: 'processing', progress: 30, message: 'Generating image' });
    await h.knex('ai_image_edits').where({ workflow_id: workflowId }).update({ status: 'failed', message: 'closed' });
    await h.activities.markImageEditProgress({ ...row, progress: 94, message: 'Sending for approval' });
    await expect(read()).resolves.toEqual({ status: 'failed', progress: 30, message: 'closed' });
  });

  it('replays a history recorded before the progress writes ran beside the steps (one after another, each first)', async () => {
    const history = historyFromJSON(JSON.parse(fs.readFileSync(PROGRESS_FIRST_FIXTURE, 'utf8')));
    expect(patchesOf(history)).not.toContain('image-edit-progress-beside-steps');
    expect(localActivityTypes(history)).toEqual([
      'markImageEditProgress',
      'reserveImageEditCredits',
      'markImageEditProgress',
      'refineImagePrompt',
      'markImageEditProgress',
      'markImageEditProgress',
      'markImageEditProgress',
      'submitForApproval',
      'recordImageEdit',
    ]);
    await expect(Worker.runReplayHistory(bundle(), history, 'image-edit-progress-first-fixture')).resolves.toBeUndefined();
  }, 60_000);

  it('replays a history recorded before the status row (state kept in memory, record and item side by side)', async () => {
    const history = historyFromJSON(JSON.parse(fs.readFileSync(STATUS_ROW_FIXTURE, 'utf8')));
    expect(activityTypes(history)).toEqual(['makeEditedImage']);
    expect([...localActivityTypes(history)].sort()).toEqual(['recordImageEdit', 'refineImagePrompt', 'reserveImageEditCredits', 'submitForApproval']);
    await expect(Worker.runReplayHistory(bundle(), history, 'image-edit-status-row-fixture')).resolves.toBeUndefined();
  }, 60_000);

  it('replays a history recorded before the approval was started by its step (a child workflow)', async () => {
    const history = historyFromJSON(JSON.parse(fs.readFileSync(CHILD_FIXTURE, 'utf8')));
    expect(activityTypes(history)).toEqual(['makeEditedImage']);
    expect(localActivityTypes(history)).toEqual(['reserveImageEditCredits', 'refineImagePrompt', 'recordImageEdit', 'createPendingApproval']);
    expect(childStarts(history)).toBe(1);
    await expect(Worker.runReplayHistory(bundle(), history, 'image-edit-child-fixture')).resolves.toBeUndefined();
  }, 60_000);

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
