/**
 * The access-matrix test's world: one user per role (owner, admin, member, viewer) and a non-member, and team
 * workspaces holding one resource of every kind (project, render, image, clip, compiled video, older generated item,
 * lineage, assembly chat, pending approval with its reservation, clip / image-edit / assembly / draft jobs, draft with
 * images, purchase, resumable upload, invitation, data export, webhook endpoint with a delivery), with their files stored; plus the snapshot that
 * proves a refused call changed nothing (every table's rows, the workspace's ledger and balance, every stored file).
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Knex } from 'knex';
import { VIDEO_EFFECTS } from '../../domain/constants';
import { WORKSPACE_ROLES, type WorkspaceRole } from '../../domain/workspaceRoles';
import { addCredits, reserveCredits } from '../../services/billing/credits';
import { BUCKETS, type Bucket, type Storage } from '../../storage';
import type { TestUser } from './accounts';

export type MatrixRole = WorkspaceRole | 'nonMember';
export const MATRIX_ROLES: readonly MatrixRole[] = [...WORKSPACE_ROLES, 'nonMember'];

/** One user per role, the non-member, and `target`: a member of every matrix workspace who never calls (member management acts on them). */
export type MatrixUsers = Record<MatrixRole | 'target', TestUser>;

/** Ids of one workspace's resources, by what they are (the request builder fills parameters from them). */
export interface MatrixResources {
  workspaceId: string;
  projectId: string;
  renderId: string;
  renderUrl: string;
  imageId: string;
  clipId: string;
  compiledVideoId: string;
  generatedId: string;
  approvalId: string;
  clipJobId: string;
  imageEditJobId: string;
  assemblyJobId: string;
  draftId: string;
  draftImageId: string;
  draftImageUrl: string;
  draftJobId: string;
  purchaseSessionId: string;
  uploadId: string;
  invitationId: string;
  exportId: string;
  /** a webhook endpoint with one delivered event (its delivery and attempt in the log) */
  webhookEndpointId: string;
  webhookDeliveryId: string;
  /** a comment thread on the clip, opened by the target member, with its opening comment */
  commentThreadId: string;
  commentId: string;
  /** a review link (comment only) holding the pending item, and its token */
  reviewLinkId: string;
  reviewLinkToken: string;
  /** a music track of the workspace, its file stored */
  musicTrackId: string;
  /** a member who never calls: the one member management calls act on (a caller naming themselves would be leaving) */
  targetUserId: string;
}

/** A tiny valid PNG (1x1), for stored files and multipart uploads. */
export const TINY_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

async function store(storage: Storage, bucket: Bucket, path: string): Promise<string> {
  await storage.objects.put(bucket, path, Buffer.concat([TINY_PNG, randomBytes(8)]));
  return path;
}

/**
 * A team workspace (not personal) with every role's user as a member in that role, its account row funded through
 * the ledger (balance = ledger sum), and one resource of every kind, files stored.
 */
export async function createMatrixWorkspace(
  knex: Knex,
  storage: Storage,
  users: MatrixUsers,
  options: { credits?: number; openUpload?: (workspaceId: string, projectId: string) => Promise<string> } = {},
): Promise<MatrixResources> {
  const credits = options.credits ?? 200;
  const owner = users.owner;
  const workspaceId = randomUUID();
  // independent rows and files are written at once (the pool has several connections); each step waits only for
  // the rows it points at
  await knex('workspaces').insert({ id: workspaceId, name: `Matrix ${workspaceId.slice(0, 8)}`, created_by: owner.id });
  await knex('profiles').insert({ id: workspaceId, email: owner.email, name: 'Matrix studio', credits: 0 });
  const purchaseSessionId = `cs_matrix_${randomUUID().replace(/-/g, '')}`;
  const [, , , [{ id: projectId }]] = await Promise.all([
    knex('workspace_members').insert([
      ...WORKSPACE_ROLES.map((role) => ({ workspace_id: workspaceId, user_id: users[role].id, role })),
      { workspace_id: workspaceId, user_id: users.target.id, role: 'member' },
    ]),
    addCredits(knex, { workspaceId, amount: credits, type: 'purchase', description: 'Matrix credits', idempotencyKey: `matrix:${workspaceId}` }),
    // the workspace bought them (the spec's 'rejection requires a purchase' then holds for it)
    knex('credit_purchases').insert({
      workspace_id: workspaceId,
      package_id: 'small',
      credits: 12,
      amount_cents: 25000,
      stripe_session_id: purchaseSessionId,
      status: 'completed',
      completed_at: knex.fn.now(),
    }),
    knex('projects').insert({ workspace_id: workspaceId, name: 'Matrix project', address: '1 Matrix St' }).returning('id') as Promise<Array<{ id: string }>>,
  ]);
  const base = { project_id: projectId, workspace_id: workspaceId };
  const prefix = `${workspaceId}/${projectId}`;

  const renderId = randomUUID();
  const renderPath = `${prefix}/${renderId}.png`;
  const renderUrl = `/api/files/renders/${renderPath}`;
  const imageId = randomUUID();
  const imagePath = `${prefix}/${imageId}.png`;
  const clipId = randomUUID();
  const clipPath = `${prefix}/${clipId}.mp4`;
  const assemblyJobId = randomUUID();
  const compiledVideoId = randomUUID();
  const videoPath = `${prefix}/${compiledVideoId}.mp4`;
  const clipJobId = randomUUID();
  const imageEditJobId = randomUUID();
  const approvalId = randomUUID();
  const originalPath = `pending/${approvalId}/original.mp4`;
  const previewPath = `pending/${approvalId}/preview.mp4`;
  const musicTrackId = randomUUID();
  const musicPath = `music/${workspaceId}/${musicTrackId}.mp3`;

  const files = Promise.all([
    store(storage, 'renders', renderPath),
    store(storage, 'renders', `${prefix}/${renderId}_thumb.png`),
    store(storage, 'images', imagePath),
    store(storage, 'clips', clipPath),
    store(storage, 'videos', videoPath),
    store(storage, 'clips', originalPath),
    store(storage, 'clips', previewPath),
    store(storage, 'videos', musicPath),
  ]);

  const renderChain = async () => {
    await knex('renders').insert({
      id: renderId,
      ...base,
      file_url: renderUrl,
      file_name: 'living-room.png',
      file_size: TINY_PNG.length,
      width: 1,
      height: 1,
      aspect_ratio: '1:1',
      checksum: createHash('sha256').update(renderId).digest('hex'),
      thumbnail_path: `${prefix}/${renderId}_thumb.png`,
      storage_bucket: 'renders',
      storage_path: renderPath,
      storage_mime: 'image/png',
      storage_size: TINY_PNG.length,
    });
    const clipChain = async () => {
      await knex('clips').insert({ id: clipId, ...base, render_id: renderId, file_url: `/api/files/clips/${clipPath}`, file_name: 'zoom.mp4', duration: 5, credits_used: 1, storage_bucket: 'clips', storage_path: clipPath, storage_mime: 'video/mp4' });
      const assembly = async () => {
        await knex('assembly_jobs').insert({ id: assemblyJobId, ...base, platform: 'instagram', clip_ids: [clipId], status: 'completed', progress: 100, workflow_id: `assembly-${assemblyJobId}`, created_by: owner.id });
        await knex('compiled_videos').insert({
          id: compiledVideoId,
          ...base,
          file_url: `/api/files/videos/${videoPath}`,
          file_name: 'reel.mp4',
          clip_ids: [clipId],
          storage_bucket: 'videos',
          storage_path: videoPath,
          storage_mime: 'video/mp4',
          workflow_id: `assembly-out-${compiledVideoId}`,
          assembly_job_id: assemblyJobId,
          // in the library (a video waiting for its approval is not)
          editing_data: JSON.stringify({ status: 'approved' }),
        });
      };
      const comments = async () => {
        const [{ id: threadId }] = await knex('comment_threads')
          .insert({ workspace_id: workspaceId, item_kind: 'clip', item_id: clipId, pin: JSON.stringify({ x: 0.5, y: 0.5 }), created_by: users.target.id })
          .returning('id');
        const [{ id }] = await knex('comments').insert({ thread_id: threadId, workspace_id: workspaceId, created_by: users.target.id, body: 'Matrix comment' }).returning('id');
        return { commentThreadId: threadId as string, commentId: id as string };
      };
      const [, , thread] = await Promise.all([
        knex('content_lineage').insert({ workspace_id: workspaceId, item_kind: 'clip', item_id: clipId, source_kind: 'render', source_id: renderId }),
        assembly(),
        comments(),
      ]);
      return thread;
    };
    const generated = async () => {
      const [{ id }] = await knex('generated_content')
        .insert({ ...base, render_id: renderId, content_type: 'image', file_url: `/api/files/images/${prefix}/${randomUUID()}.png`, file_name: 'older.png' })
        .returning('id');
      return id as string;
    };
    const approvalChain = async () => {
      // failed: it can be retried, and a new clip may start beside it
      await knex('video_generation_jobs').insert({
        id: clipJobId,
        ...base,
        render_id: renderId,
        status: 'failed',
        progress: 30,
        error: 'provider down',
        workflow_id: `clip-${clipJobId}`,
        options: JSON.stringify({ effect: VIDEO_EFFECTS[0] }),
        created_by: users.member.id,
      });
      const reservation = await reserveCredits(knex, { workspaceId, contentType: 'clip', amount: 3, idempotencyKey: `matrix:${approvalId}` });
      await knex('pending_approvals').insert({
        id: approvalId,
        ...base,
        content_type: 'clip',
        status: 'pending',
        file_name: 'pending.mp4',
        original_bucket: 'clips',
        original_path: originalPath,
        watermarked_bucket: 'clips',
        watermarked_path: previewPath,
        approval_deadline: new Date(Date.now() + 86_400_000),
        cost: 3,
        remaining_cost: 3,
        reservation_id: reservation.id,
        workflow_id: `approval-${approvalId}`,
        source_job_id: clipJobId,
        created_by: users.member.id,
      });
      const token = randomBytes(32).toString('base64url');
      const [{ id }] = await knex('review_links')
        .insert({
          workspace_id: workspaceId,
          created_by: users.target.id,
          token_hash: createHash('sha256').update(token).digest('hex'),
          title: 'Matrix link',
          expires_at: new Date(Date.now() + 86_400_000),
        })
        .returning('id');
      await knex('review_link_items').insert({ review_link_id: id, approval_id: approvalId, position: 0 });
      return { reviewLinkId: id as string, reviewLinkToken: token };
    };
    const [thread, generatedId, link] = await Promise.all([
      clipChain(),
      generated(),
      approvalChain(),
      knex('images').insert({ id: imageId, ...base, file_url: `/api/files/images/${imagePath}`, file_name: 'brighter.png', original_prompt: 'brighter', storage_bucket: 'images', storage_path: imagePath, storage_mime: 'image/png' }),
      knex('ai_image_edits').insert({ id: imageEditJobId, ...base, workflow_id: `image-edit-${imageEditJobId}`, original_image_url: renderUrl, edit_prompt: 'warmer light', status: 'processing', created_by: users.member.id }),
    ]);
    return { ...thread, generatedId, ...link };
  };

  const draftChain = async () => {
    const [{ id: draftId }] = await knex('drafts').insert({ workspace_id: workspaceId, name: 'Matrix draft' }).returning('id');
    const draftImagePath = await store(storage, 'drafts', `${workspaceId}/${draftId}/${randomUUID()}.png`);
    const draftImageUrl = `/api/files/drafts/${draftImagePath}`;
    const draftFile = { bucket: 'drafts', path: draftImagePath };
    const [{ id: draftImageId }] = await knex('draft_images')
      .insert({
        draft_id: draftId,
        name: 'draft.png',
        source_url: draftImageUrl,
        resolved_url: draftImageUrl,
        source_type: 'upload',
        order_index: 0,
        metadata: JSON.stringify({
          storage: draftFile,
          previous_url: null,
          history: [{ url: draftImageUrl, storage: draftFile, created_at: new Date().toISOString(), source: 'upload' }],
          width: 1,
          height: 1,
          mime: 'image/png',
        }),
      })
      .returning('id');
    const draftJobId = randomUUID();
    await knex('draft_jobs').insert({
      id: draftJobId,
      draft_id: draftId,
      draft_image_id: draftImageId,
      workspace_id: workspaceId,
      model_id: 'nano-banana-edit',
      mode: 'edit_render',
      prompt: 'brighter',
      status: 'failed',
      error: 'provider down',
      workflow_id: `draft-job-${draftJobId}`,
      created_by: users.member.id,
    });
    return { draftId: draftId as string, draftImageId: draftImageId as string, draftImageUrl, draftJobId };
  };

  // a tus upload in progress: opened through the API when the caller can (the tus store keeps its own file), else its row
  const upload = async () => {
    if (options.openUpload) return options.openUpload(workspaceId, projectId);
    const id = randomBytes(16).toString('hex');
    await knex('resumable_uploads').insert({ id, workspace_id: workspaceId, project_id: projectId, file_name: 'big.png', size: 100, status: 'uploading' });
    return id;
  };

  const webhookChain = async () => {
    const [{ id: endpointId }] = await knex('webhook_endpoints')
      .insert({ workspace_id: workspaceId, url: 'http://127.0.0.1:9/matrix', event_types: ['job.completed'], secret: `whsec_${randomBytes(32).toString('base64')}`, created_by: owner.id })
      .returning('id');
    const [{ id: webhookEventId }] = await knex('webhook_events')
      .insert({ workspace_id: workspaceId, type: 'job.completed', resource_id: clipJobId, payload: JSON.stringify({ type: 'job.completed', version: 1, timestamp: new Date().toISOString(), data: {} }) })
      .returning('id');
    const [{ id: deliveryId }] = await knex('webhook_deliveries')
      .insert({ endpoint_id: endpointId, event_id: webhookEventId, status: 'succeeded', attempts: 1, last_status_code: 200, last_latency_ms: 12, delivered_at: knex.fn.now() })
      .returning('id');
    await knex('webhook_delivery_attempts').insert({ delivery_id: deliveryId, status_code: 200, latency_ms: 12, request_body: '{}', response_body: 'ok' });
    return { webhookEndpointId: endpointId as string, webhookDeliveryId: deliveryId as string };
  };

  const [rendered, { draftId, draftImageId, draftImageUrl, draftJobId }, uploadId, [{ id: invitationId }], [{ id: exportId }], { webhookEndpointId, webhookDeliveryId }] = await Promise.all([
    renderChain(),
    draftChain(),
    upload(),
    knex('workspace_invitations')
      .insert({
        workspace_id: workspaceId,
        email: `invited-${randomUUID()}@example.test`,
        role: 'member',
        token_hash: createHash('sha256').update(randomBytes(32)).digest('hex'),
        invited_by: owner.id,
        expires_at: new Date(Date.now() + 7 * 86_400_000),
      })
      .returning('id') as Promise<Array<{ id: string }>>,
    knex('data_exports').insert({ workspace_id: workspaceId, sequence: 1, workflow_id: `export-${workspaceId}-1`, status: 'completed', progress: 100 }).returning('id') as Promise<Array<{ id: string }>>,
    webhookChain(),
    knex('aesthetic_chats').insert({ project_id: projectId, workspace_id: workspaceId, chat_history: JSON.stringify([]) }),
    knex('music_tracks').insert({
      id: musicTrackId,
      workspace_id: workspaceId,
      name: 'Matrix calm',
      format: 'mp3',
      mime: 'audio/mpeg',
      duration_seconds: 30,
      size_bytes: TINY_PNG.length + 8,
      channels: 2,
      sample_rate: 44100,
      storage_bucket: 'videos',
      storage_path: musicPath,
      created_by: users.target.id,
    }),
    files,
  ]);
  const { commentThreadId, commentId, generatedId, reviewLinkId, reviewLinkToken } = rendered;

  return {
    musicTrackId,
    workspaceId,
    projectId,
    renderId,
    renderUrl,
    imageId,
    clipId,
    compiledVideoId,
    generatedId,
    approvalId,
    clipJobId,
    imageEditJobId,
    assemblyJobId,
    draftId,
    draftImageId,
    draftImageUrl,
    draftJobId,
    purchaseSessionId,
    uploadId,
    invitationId,
    exportId,
    webhookEndpointId,
    webhookDeliveryId,
    commentThreadId,
    commentId,
    reviewLinkId,
    reviewLinkToken,
    targetUserId: users.target.id,
  };
}

/**
 * Removes every team workspace (its rows go with it: everything hangs off its account row) and every stored file, so
 * the next operation's snapshots stay small. The users and their personal workspaces stay, and so do the workspaces
 * in `keep` with their files (every file of a matrix workspace has its workspace's or its pending item's id in its path).
 */
export async function removeMatrixWorkspaces(knex: Knex, storage: Storage, keep: readonly MatrixResources[] = []): Promise<void> {
  await knex('workspaces')
    .whereNull('personal_user_id')
    .whereNotIn('id', keep.map((r) => r.workspaceId))
    .delete();
  const kept = keep.flatMap((r) => [r.workspaceId, r.approvalId]);
  await Promise.all(
    BUCKETS.map(async (bucket) => {
      const paths = (await storage.objects.list(bucket, '')).map((o) => o.path).filter((p) => !p.startsWith('_') && !kept.some((id) => p.includes(id)));
      if (paths.length) await storage.objects.remove(bucket, paths);
    }),
  );
}

/** Tables whose rows a refused call may still write: sign-in budgets, sessions and access tokens (last use), the realtime outbox. */
export const UNWATCHED_TABLES = ['auth_rate_limits', 'sessions', 'access_tokens', 'user_events'];

export interface MatrixSnapshot {
  /** per table: row count and a digest of every row */
  tables: Record<string, { rows: number; digest: string }>;
  ledger: { balance: number; reserved: number; ledgerSum: number; activeReservations: number };
  files: string[];
}

/**
 * `localDirs`: folders of the local disk backend outside the buckets where a request can leave a file (tus uploads in
 * progress, writes not yet finished), listed as `<folder name>/<path>`.
 */
export async function snapshot(knex: Knex, storage: Storage, workspaceId: string, localDirs: readonly string[] = []): Promise<MatrixSnapshot> {
  const names = (await knex('pg_tables').where({ schemaname: 'public' }).whereNot('tablename', 'like', 'knex_%').orderBy('tablename').pluck('tablename')) as string[];
  const watched = names.filter((name) => !UNWATCHED_TABLES.includes(name));
  const sql = watched
    .map((name) => `select '${name}' as t, count(*)::int as n, md5(coalesce(string_agg(x::text, '|' order by x::text), '')) as h from "${name}" x`)
    .join(' union all ');
  const sum = async (table: string, where: Record<string, unknown>) =>
    Number((await knex(table).where(where).sum<{ s: string | null }>('amount as s').first())?.s ?? 0);
  // the tables, the ledger and the buckets are read at once
  const [{ rows }, profile, ledgerSum, activeReservations, listed] = await Promise.all([
    knex.raw<{ rows: Array<{ t: string; n: number; h: string }> }>(sql),
    knex('profiles').where({ id: workspaceId }).first('credits', 'reserved_credits'),
    sum('credit_transactions', { workspace_id: workspaceId }),
    sum('credit_reservations', { workspace_id: workspaceId, status: 'active' }),
    Promise.all(BUCKETS.map(async (bucket) => (await storage.objects.list(bucket, '')).filter((o) => !o.path.startsWith('_')).map((o) => `${bucket}/${o.path} (${o.size} B)`))),
  ]);
  const tables = Object.fromEntries(rows.map((r) => [r.t, { rows: r.n, digest: r.h }]));
  const ledger = {
    balance: profile?.credits ?? -1,
    reserved: profile?.reserved_credits ?? -1,
    ledgerSum,
    activeReservations,
  };
  const files: string[] = listed.flat();
  for (const dir of localDirs) {
    if (!fs.existsSync(dir)) continue;
    for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const full = path.join(entry.parentPath, entry.name);
      files.push(`${path.relative(path.dirname(dir), full).split(path.sep).join('/')} (${fs.statSync(full).size} B)`);
    }
  }
  return { tables, ledger, files: files.sort() };
}

/** What differs between two snapshots, in words (empty when nothing changed). */
export function snapshotChanges(before: MatrixSnapshot, after: MatrixSnapshot): string[] {
  const changes: string[] = [];
  for (const table of new Set([...Object.keys(before.tables), ...Object.keys(after.tables)])) {
    const a = before.tables[table];
    const b = after.tables[table];
    if (!a || !b) changes.push(`table ${table} ${a ? 'dropped' : 'created'}`);
    else if (a.rows !== b.rows) changes.push(`${table}: ${a.rows} -> ${b.rows} rows`);
    else if (a.digest !== b.digest) changes.push(`${table}: rows changed`);
  }
  for (const key of Object.keys(before.ledger) as Array<keyof MatrixSnapshot['ledger']>) {
    if (before.ledger[key] !== after.ledger[key]) changes.push(`workspace ${key}: ${before.ledger[key]} -> ${after.ledger[key]}`);
  }
  const added = after.files.filter((f) => !before.files.includes(f));
  const removed = before.files.filter((f) => !after.files.includes(f));
  if (added.length) changes.push(`files added: ${added.join(', ')}`);
  if (removed.length) changes.push(`files removed: ${removed.join(', ')}`);
  return changes;
}
