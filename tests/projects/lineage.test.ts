import { randomUUID } from 'node:crypto';
import { createApprovalActivities } from '../../activities/approvals';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import type { ApprovalMetadata } from '../../domain/approvals';
import { backfillLineage } from '../../db/migrations/20261124000510_content_lineage';
import { checkAndReserve } from '../../services/billing/credits';
import { recordLineage } from '../../services/content/lineage';
import { createStorage } from '../../storage';
import { makeAdmin, type TestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { request, type TestServer } from '../support/http';
import { createProject, newUser, pngBytes, startProjectsApp, uploadRender } from './fixtures';

const config = loadConfig();
const storage = createStorage(config);
let server: TestServer;
let activities: ReturnType<typeof createApprovalActivities>;

beforeAll(async () => {
  server = (await startProjectsApp()).server;
  activities = createApprovalActivities({ knex: testKnex(), config, storage, logger });
});

afterAll(async () => {
  await server.close();
  await closeTestKnex();
});

/** Saves a generated item the way a workflow does: pending approval with its reservation, then approved. */
async function approved(user: TestUser, projectId: string, kind: 'image' | 'clip', metadata: ApprovalMetadata, jobId: string): Promise<string> {
  const approvalId = randomUUID();
  const bucket = kind === 'image' ? 'images' : 'clips';
  const reservation = await checkAndReserve(testKnex(), { workspaceId: user.id, contentType: kind, idempotencyKey: `lineage:${approvalId}` });
  const files = [`pending/${approvalId}/original`, `pending/${approvalId}/preview`, `pending/${approvalId}/thumb.webp`];
  for (const path of files) await storage.objects.put(bucket, path, Buffer.from(path));
  await activities.createPendingApproval({
    approvalId,
    workspaceId: user.id,
    projectId,
    fileName: `${kind}-${jobId}`,
    aspectRatio: '16:9',
    original: { bucket, path: files[0] },
    watermarked: { bucket, path: files[1] },
    thumbnailPath: files[2],
    reservationId: reservation.id,
    cost: kind === 'image' ? 1 : 4,
    sourceJobId: jobId,
    metadata,
  });
  const { contentId } = await activities.approvePendingItem({ approvalId });
  if (!contentId) throw new Error('an approval with no actor approves at once');
  return contentId;
}

const lineage = (user: TestUser, id: string) => request(server.baseUrl, `/api/content/${id}/lineage`, { token: user.token });

describe('the version chain from render to video', () => {
  let user: TestUser;
  let projectId: string;
  let renderId: string;
  let imageId: string;
  let clipId: string;
  let videoId: string;

  beforeAll(async () => {
    user = await newUser(server.baseUrl);
    projectId = (await createProject(server.baseUrl, user, 'Lineage')).id;
    const upload = await uploadRender(server.baseUrl, user, projectId, { bytes: await pngBytes(320, 180, 4), fileName: 'base.png', type: 'image/png' });
    renderId = upload.body.render?.data.id as string;
    const renderUrl = (await testKnex()('renders').where({ id: renderId }).first()).file_url as string;
    // an edit of the render, as the image workflow saves it on approval (its base named by the render's signed link)
    imageId = await approved(
      user,
      projectId,
      'image',
      { kind: 'image', originalPrompt: 'dusk', refinedPrompt: 'Dusk.', baseImageUrl: `${renderUrl}?expires=1&signature=x`, format: 'square', width: 10, height: 10, fileSize: 10, mime: 'image/png', upscaled: false },
      'job-image',
    );
    clipId = await approved(
      user,
      projectId,
      'clip',
      { kind: 'clip', renderId: null, imageId, effect: 'zoom_in', platform: 'youtube', aspectRatio: '16:9', durationSeconds: 5, fileSize: 10, mime: 'video/mp4', promptUsed: null },
      'job-clip',
    );
    const [video] = await testKnex()('compiled_videos')
      .insert({ project_id: projectId, workspace_id: user.id, file_url: '/api/files/videos/x.mp4', file_name: 'Reel', clip_ids: [clipId], editing_data: { status: 'approved' } })
      .returning('id');
    videoId = video.id;
    await recordLineage(testKnex(), { workspaceId: user.id, itemKind: 'compiled_video', itemId: videoId, sources: [{ kind: 'clip', id: clipId }], workflowId: 'assembly-job-video' });
  });

  it('saving an approved image or clip records what it was made from and by which run', async () => {
    const edges = await testKnex()('content_lineage').where({ workspace_id: user.id }).orderBy('id');
    expect(edges.map((e) => [e.item_kind, e.item_id, e.source_kind, e.source_id, e.workflow_id])).toEqual([
      ['image', imageId, 'render', renderId, 'image-edit-job-image'],
      ['clip', clipId, 'image', imageId, 'clip-job-clip'],
      ['compiled_video', videoId, 'clip', clipId, 'assembly-job-video'],
    ]);
  });

  it('answers the chain up and down from any item, nearest first', async () => {
    const fromClip = await lineage(user, clipId);
    expect(fromClip.status).toBe(200);
    expect(fromClip.body.item).toMatchObject({ kind: 'clip', id: clipId, exists: true, workflow_id: 'clip-job-clip' });
    expect(fromClip.body.ancestors.map((n: { kind: string; id: string; depth: number }) => [n.kind, n.id, n.depth])).toEqual([
      ['image', imageId, 1],
      ['render', renderId, 2],
    ]);
    expect(fromClip.body.ancestors[1]).toMatchObject({ name: 'base.png', exists: true, workflow_id: null });
    expect(fromClip.body.ancestors[1].thumbnail_url).toEqual(expect.any(String));
    expect(fromClip.body.descendants).toEqual([expect.objectContaining({ kind: 'compiled_video', id: videoId, depth: 1, name: 'Reel', workflow_id: 'assembly-job-video' })]);
    expect(fromClip.body.item).not.toHaveProperty('temporal_url');

    const fromRender = await lineage(user, renderId);
    expect(fromRender.body.ancestors).toEqual([]);
    expect(fromRender.body.descendants.map((n: { kind: string; depth: number }) => [n.kind, n.depth])).toEqual([
      ['image', 1],
      ['clip', 2],
      ['compiled_video', 3],
    ]);
  });

  it('deleting an item leaves the others their chain, with the gap marked deleted', async () => {
    const gone = await request(server.baseUrl, `/api/projects/${projectId}/content/images/${imageId}`, { method: 'DELETE', token: user.token });
    expect(gone.status).toBe(200);
    const fromClip = await lineage(user, clipId);
    expect(fromClip.body.ancestors).toEqual([
      expect.objectContaining({ kind: 'image', id: imageId, exists: false, name: null, depth: 1 }),
      expect.objectContaining({ kind: 'render', id: renderId, exists: true, depth: 2 }),
    ]);
    expect((await lineage(user, imageId)).status).toBe(404);
  });

  it('is owner-scoped, and admins get a link to each run in the Temporal UI', async () => {
    const stranger = await newUser(server.baseUrl);
    expect((await lineage(stranger, clipId)).status).toBe(404);
    expect((await lineage(stranger, 'not-a-uuid')).status).toBe(404);
    expect((await request(server.baseUrl, `/api/content/${clipId}/lineage`)).status).toBe(401);
    await makeAdmin(testKnex(), user.id);
    const asAdmin = await lineage(user, clipId);
    expect(asAdmin.body.item.temporal_url).toBe(`${config.temporalUiUrl}/namespaces/${config.temporalNamespace}/workflows/clip-job-clip`);
    expect(asAdmin.body.ancestors[1].temporal_url).toBeNull();
  });

  it('the backfill derives edges for items saved before the chain was recorded', async () => {
    const old = await newUser(server.baseUrl);
    const project = (await createProject(server.baseUrl, old, 'Before')).id;
    const render = (await uploadRender(server.baseUrl, old, project, { bytes: await pngBytes(200, 100, 8), fileName: 'old.png', type: 'image/png' })).body.render?.data.id as string;
    const renderUrl = (await testKnex()('renders').where({ id: render }).first()).file_url as string;
    const [image] = await testKnex()('images').insert({ project_id: project, workspace_id: old.id, file_url: '/api/files/images/old-edit.png', file_name: 'edit', base_image_url: renderUrl }).returning('id');
    const [clip] = await testKnex()('clips').insert({ project_id: project, workspace_id: old.id, file_url: '/api/files/clips/old.mp4', file_name: 'clip', image_id: image.id }).returning('id');
    const [video] = await testKnex()('compiled_videos').insert({ project_id: project, workspace_id: old.id, file_url: '/api/files/videos/old.mp4', file_name: 'reel', clip_ids: [clip.id] }).returning('id');
    await backfillLineage(testKnex());
    await backfillLineage(testKnex());
    const fromVideo = await lineage(old, video.id);
    expect(fromVideo.body.ancestors.map((n: { kind: string; id: string }) => [n.kind, n.id])).toEqual([
      ['clip', clip.id],
      ['image', image.id],
      ['render', render],
    ]);
  });
});
