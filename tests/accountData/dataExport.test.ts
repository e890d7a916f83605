import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { UrlSigner } from '../../storage';
import { EXPORT_LINK_TTL_SECONDS, type DataExportView } from '../../domain/accountData';
import { dataExportStateQuery } from '../../workflows';
import { clipUser, renderJpeg, startClipWorker, type ClipUser, type RunningWorker } from '../clips/fixtures';
import { insertPendingApproval } from '../support/credits';
import { closeTestKnex, testKnex } from '../support/db';
import { request } from '../support/http';
import { fileRefOfLink, linkExpiresAt, runBackend, tamperedLinks } from '../support/objectStorage';
import { testClient, uniqueTaskQueue } from '../support/temporal';
import { createTestUser } from '../support/accounts';
import {
  latestExport,
  readZip,
  sha256,
  startAccountDataApp,
  storedFilesUnder,
  waitForExport,
  type AccountDataApp,
  type FileDigest,
} from './support/accountDataApp';

let app: AccountDataApp;
let worker: RunningWorker;
let client: Client;
let closeClient: () => Promise<void>;
let scratch: string;

beforeAll(async () => {
  app = await startAccountDataApp();
  worker = await startClipWorker(app.taskQueue);
  ({ client, close: closeClient } = await testClient());
  scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'data-export-'));
});

afterAll(async () => {
  await worker?.stop();
  await closeClient?.();
  await app?.close();
  await fs.rm(scratch, { recursive: true, force: true });
  await closeTestKnex();
});

/** A second render in the user's project, uploaded through the API. */
async function uploadRender(user: ClipUser, name: string, width: number): Promise<void> {
  const form = new FormData();
  form.append('projectId', user.projectId);
  form.append('file', new Blob([new Uint8Array(await renderJpeg(width, Math.round((width * 9) / 16)))], { type: 'image/jpeg' }), name);
  const res = await request(app.baseUrl, '/api/upload/renders', { method: 'POST', body: form, token: user.token });
  expect([200, 201]).toContain(res.status);
}

/** A pending item with its original and watermarked preview stored, as a generation leaves it. */
async function pendingItemWithFiles(user: ClipUser, width = 640): Promise<string> {
  const { id } = await insertPendingApproval(testKnex(), { userId: user.id, projectId: user.projectId, cost: 1, reserve: true });
  await app.storage.objects.put('images', `pending/${id}/original`, await renderJpeg(width, Math.round((width * 9) / 16)));
  await app.storage.objects.put('images', `pending/${id}/preview`, await renderJpeg(width / 2, Math.round((width * 9) / 32)));
  return id;
}

/** Every stored file of the user, read from the storage (not from the rows the export reads). */
async function filesOnDisk(userId: string, approvalIds: string[]): Promise<FileDigest[]> {
  const dir = app.storage;
  const all = [
    ...(await storedFilesUnder(dir, 'renders', userId)),
    ...(await storedFilesUnder(dir, 'renders', `thumbs/${userId}`)),
    ...(await storedFilesUnder(dir, 'renders', `previews/${userId}`)),
    ...(await storedFilesUnder(dir, 'clips', userId)),
  ];
  for (const id of approvalIds) all.push(...(await storedFilesUnder(dir, 'images', `pending/${id}`)));
  return all.sort((a, b) => a.name.localeCompare(b.name));
}

async function download(view: DataExportView): Promise<{ res: Response; file: string }> {
  const res = await fetch(new URL(view.downloadUrl as string, app.baseUrl));
  const file = path.join(scratch, `${view.id}.zip`);
  await fs.writeFile(file, Buffer.from(await res.arrayBuffer()));
  return { res, file };
}

describe('data export (POST/GET /api/account/exports, workflow export-<userId>-<n>)', () => {
  it('zips the profile, projects, items, ledger and every stored file of the user, and nothing of another user', async () => {
    const owner = await clipUser(app.baseUrl);
    await uploadRender(owner, 'courtyard.jpg', 800);
    const approvalId = await pendingItemWithFiles(owner);
    // other pixels, so its files cannot be mistaken for the owner's
    const other = await clipUser(app.baseUrl, { fileName: 'other-secret.jpg', image: await renderJpeg(1024, 576) });
    const otherApproval = await pendingItemWithFiles(other, 720);
    const onDisk = await filesOnDisk(owner.id, [approvalId]);
    const otherFiles = await filesOnDisk(other.id, [otherApproval]);
    // two renders with thumbnails and previews, the pending original and preview
    expect(onDisk).toHaveLength(8);
    expect(otherFiles).toHaveLength(5);
    // pay on approval: the pending item leaves as its watermarked preview, never as its original
    const pendingOriginal = onDisk.find((f) => f.name === `files/images/pending/${approvalId}/original`);
    expect(pendingOriginal).toBeDefined();
    const expected = onDisk.filter((f) => f !== pendingOriginal);

    const started = await request<{ success: boolean; export: DataExportView }>(app.baseUrl, '/api/account/exports', { token: owner.token, json: {} });
    expect(started.status).toBe(202);
    expect(started.body.export).toMatchObject({ number: 1, workflowId: `export-${owner.id}-1`, downloadUrl: null });
    expect(['pending', 'processing']).toContain(started.body.export.status);

    const { view, seen } = await waitForExport(app.baseUrl, owner);
    expect(view).toMatchObject({ status: 'completed', progress: 100, number: 1, fileCount: 7, error: null });
    const progress = seen.map((s) => s.progress);
    for (let i = 1; i < progress.length; i += 1) expect(progress[i]).toBeGreaterThanOrEqual(progress[i - 1]);
    expect(view.fileName).toMatch(/^render-studio-export-\d{4}-\d{2}-\d{2}-1\.zip$/);
    // the workflow's own state, queried after it closed (the row is marked completed just before the run ends)
    await client.workflow.getHandle(view.workflowId).result();
    expect(await client.workflow.getHandle(view.workflowId).query(dataExportStateQuery)).toMatchObject({ status: 'completed', progress: 100 });
    // the writing activity reported its progress to the workflow as it went (files started, files done)
    const history = await client.workflow.getHandle(view.workflowId).fetchHistory();
    const reports = (history.events ?? [])
      .map((e) => e.workflowExecutionSignaledEventAttributes)
      .filter((a) => a?.signalName === 'dataExportProgress')
      .map((a) => defaultPayloadConverter.fromPayload<{ progress: number; message: string }>(a?.input?.payloads?.[0] as Payload));
    expect(reports.length).toBeGreaterThanOrEqual(2);
    expect(reports[0]).toEqual({ progress: 5, message: 'Adding your files' });
    expect(reports[reports.length - 1]).toEqual({ progress: 95, message: 'Finishing your export' });
    for (let i = 1; i < reports.length; i += 1) expect(reports[i].progress).toBeGreaterThan(reports[i - 1].progress);

    // a private location of the user, reached only through the signed link
    const row = await testKnex()('data_exports').where({ id: view.id }).first();
    expect(row).toMatchObject({ workspace_id: owner.id, sequence: 1, storage_bucket: 'videos', status: 'completed' });
    expect(row.storage_path).toBe(`exports/${owner.id}/${view.id}/${view.fileName}`);
    expect(fileRefOfLink(view.downloadUrl as string)).toEqual({ bucket: 'videos', path: `exports/${owner.id}/${view.id}/${view.fileName}` });
    const unsigned = await fetch(new URL(`/api/files/videos/${row.storage_path}`, app.baseUrl));
    expect(unsigned.status).toBe(403);

    const { res, file } = await download(view);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/zip');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${view.fileName}"`);
    expect(Number(res.headers.get('content-length'))).toBe(view.sizeBytes);

    const entries = await readZip(file);
    const names = entries.map((e) => e.name);
    for (const name of ['profile.json', 'projects.json', 'items.json', 'ledger.json', 'manifest.json']) expect(names).toContain(name);
    const zipped = entries
      .filter((e) => e.name.startsWith('files/'))
      .map((e) => ({ name: e.name, sha256: sha256(e.data) }))
      .sort((a, b) => a.name.localeCompare(b.name));
    expect(zipped).toEqual(expected);

    // nothing of the other user: no file, no id, no e-mail anywhere in the zip
    const otherHashes = new Set(otherFiles.map((f) => f.sha256));
    expect(zipped.filter((f) => otherHashes.has(f.sha256))).toEqual([]);
    for (const entry of entries) {
      expect(entry.name).not.toContain(other.id);
      if (entry.name.endsWith('.json')) {
        const text = entry.data.toString('utf8');
        expect(text).not.toContain(other.id);
        expect(text).not.toContain(other.email);
        expect(text).not.toContain('other-secret.jpg');
        expect(text).not.toMatch(/password|scrypt/i);
      }
    }

    const json = (name: string) => JSON.parse(entries.find((e) => e.name === name)?.data.toString('utf8') ?? 'null');
    expect(json('profile.json').profile).toMatchObject({ id: owner.id, email: owner.email, name: owner.name, credits: 5, reserved_credits: 1 });
    expect(json('projects.json').projects.map((p: { id: string; name: string }) => [p.id, p.name])).toEqual([[owner.projectId, 'Harbour View']]);
    const items = json('items.json');
    expect(items.renders.map((r: { file_name: string }) => r.file_name).sort()).toEqual(['courtyard.jpg', 'harbour-view.jpg']);
    expect(items.pending_approvals.map((p: { id: string }) => p.id)).toEqual([approvalId]);
    expect(items.credit_reservations).toHaveLength(1);
    expect(json('ledger.json').transactions.map((t: { transaction_type: string; amount: number }) => [t.transaction_type, t.amount])).toEqual([['signup_bonus', 5]]);
    const manifest = json('manifest.json');
    expect(manifest.missing).toEqual([]);
    expect(manifest.files.map((f: { name: string; sha256: string }) => ({ name: f.name, sha256: f.sha256 })).sort((a: FileDigest, b: FileDigest) => a.name.localeCompare(b.name))).toEqual(expected);
    // the manifest says the pending item is carried by its watermarked preview, and marks that file
    expect(manifest.pendingItems).toMatch(/watermarked preview only/);
    expect(manifest.files.filter((f: { watermarkedPreview?: boolean }) => f.watermarkedPreview).map((f: { name: string }) => f.name)).toEqual([`files/images/pending/${approvalId}/preview`]);
    expect(zipped.map((f) => f.sha256)).not.toContain(pendingOriginal?.sha256);
  });

  it('signs the link for 24 hours; a tampered or expired link is refused', async () => {
    const user = await clipUser(app.baseUrl);
    await request(app.baseUrl, '/api/account/exports', { token: user.token, json: {} });
    const { view } = await waitForExport(app.baseUrl, user);
    expect(view.status).toBe('completed');

    const url = new URL(view.downloadUrl as string, app.baseUrl);
    const expires = linkExpiresAt(url.toString());
    const completed = Date.parse(view.completedAt as string);
    expect(Date.parse(view.expiresAt as string) - completed).toBeGreaterThanOrEqual(EXPORT_LINK_TTL_SECONDS * 1000 - 1000);
    expect(Date.parse(view.expiresAt as string) - completed).toBeLessThanOrEqual(EXPORT_LINK_TTL_SECONDS * 1000 + 1000);
    // the signer rounds expiries up to its step (at most 10 minutes), never down
    expect(expires).toBeGreaterThanOrEqual(Date.parse(view.expiresAt as string) - 1000);
    expect(expires - completed).toBeLessThanOrEqual(EXPORT_LINK_TTL_SECONDS * 1000 + 11 * 60 * 1000);

    const tampered = tamperedLinks(url.toString());
    const refused = await fetch(tampered.signature);
    expect(refused.status).toBe(403);
    if (runBackend() === 'local') expect(await refused.json()).toMatchObject({ error: 'Invalid file link', code: 'LINK_INVALID' });
    expect((await fetch(tampered.lifetime)).status).toBe(403);

    // the same path signed a day and a bit ago, as the link looks once its 24 hours are over
    const past = new UrlSigner({ secret: app.config.signingSecret, ttlSeconds: app.config.signedUrlTtlSeconds, now: () => Date.now() - (EXPORT_LINK_TTL_SECONDS + 3600) * 1000 });
    const row = await testKnex()('data_exports').where({ id: view.id }).first('storage_path');
    const expired = await fetch(new URL(past.sign('videos', row.storage_path, EXPORT_LINK_TTL_SECONDS), app.baseUrl));
    expect(expired.status).toBe(403);
    expect(await expired.json()).toMatchObject({ error: 'This file link has expired', code: 'LINK_EXPIRED' });

    // once the 24 hours are over the status call offers no link
    await testKnex()('data_exports').where({ id: view.id }).update({ link_expires_at: new Date(Date.now() - 1000) });
    expect(await latestExport(app.baseUrl, user)).toMatchObject({ status: 'expired', downloadUrl: null });
  });

  it('numbers exports per user, answers the running one instead of starting another, and keeps only the newest zip', async () => {
    const user = await clipUser(app.baseUrl);
    expect(await latestExport(app.baseUrl, user)).toBeNull();
    const [a, b] = await Promise.all([
      request<{ export: DataExportView }>(app.baseUrl, '/api/account/exports', { token: user.token, json: {} }),
      request<{ export: DataExportView }>(app.baseUrl, '/api/account/exports', { token: user.token, json: {} }),
    ]);
    expect(a.body.export.id).toBe(b.body.export.id);
    const first = (await waitForExport(app.baseUrl, user)).view;
    const firstRow = await testKnex()('data_exports').where({ id: first.id }).first('storage_path');

    const second = await request<{ export: DataExportView }>(app.baseUrl, '/api/account/exports', { token: user.token, json: {} });
    expect(second.body.export).toMatchObject({ number: 2, workflowId: `export-${user.id}-2` });
    const done = (await waitForExport(app.baseUrl, user)).view;
    expect(done).toMatchObject({ number: 2, status: 'completed' });
    expect(await app.storage.objects.stat('videos', firstRow.storage_path)).toBeNull();
    expect((await download(done)).res.status).toBe(200);
    expect(await testKnex()('data_exports').where({ workspace_id: user.id }).orderBy('sequence').pluck('workflow_id')).toEqual([`export-${user.id}-1`, `export-${user.id}-2`]);
  });

  it('answers from the row while no worker runs the export, and the query once one does', async () => {
    const idle = uniqueTaskQueue('export-idle');
    const idleApp = await startAccountDataApp(idle);
    try {
      const user = await createTestUser(idleApp.baseUrl);
      const started = await request<{ export: DataExportView }>(idleApp.baseUrl, '/api/account/exports', { token: user.token, json: {} });
      expect(started.status).toBe(202);
      expect(await latestExport(idleApp.baseUrl, user)).toMatchObject({ status: 'pending', progress: 0, message: 'Export requested', downloadUrl: null });
      const late = await startClipWorker(idle);
      try {
        const { view } = await waitForExport(idleApp.baseUrl, user);
        expect(view).toMatchObject({ status: 'completed', fileCount: 0 });
      } finally {
        await late.stop();
      }
    } finally {
      await idleApp.close();
    }
  });

  it('needs a session, and refuses unknown fields', async () => {
    expect((await request(app.baseUrl, '/api/account/exports')).status).toBe(401);
    const user = await createTestUser(app.baseUrl);
    const res = await request(app.baseUrl, '/api/account/exports', { token: user.token, json: { userId: 'someone-else' } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, error: 'Unknown field(s): userId' });
  });
});
