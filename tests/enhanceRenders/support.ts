/**
 * Enhance Renders through the HTTP API for tests: users who entered the access code, drafts with uploaded images,
 * and the dispatch/read calls. The app and workers come from the image edit harness (tests/imageEdit/harness.ts).
 */
import sharp from 'sharp';
import { createTestUser, type TestUser } from '../support/accounts';
import { request, type JsonResponse } from '../support/http';
import { houseStill } from '../support/stills';

export const ACCESS_CODE = process.env.ENHANCE_ACCESS_CODE ?? 'RENDERS-BETA';

export async function unlock(baseUrl: string, user: TestUser, code = ACCESS_CODE): Promise<JsonResponse> {
  return request(baseUrl, '/api/enhance-set/access/unlock', { token: user.token, json: { code } });
}

/** A new account that has entered the access code. */
export async function unlockedUser(baseUrl: string): Promise<TestUser> {
  const user = await createTestUser(baseUrl);
  const res = await unlock(baseUrl, user);
  if (res.status !== 200) throw new Error(`unlock: ${res.status} ${JSON.stringify(res.body)}`);
  return user;
}

export async function createDraft(baseUrl: string, user: TestUser, name = 'Harbour draft'): Promise<string> {
  const res = await request<{ draft: { id: string } }>(baseUrl, '/api/enhance-set/drafts/create', { token: user.token, json: { userId: user.id, name } });
  if (res.status !== 201) throw new Error(`create draft: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.draft.id;
}

/** A render-like picture; `tint` shifts its colours so two images differ. */
export async function renderPng(width = 320, height = 240, tint?: { r: number; g: number; b: number }): Promise<Buffer> {
  const base = houseStill(width, height);
  return (tint ? base.tint(tint) : base).png().toBuffer();
}

export async function solidJpeg(colour: { r: number; g: number; b: number }, width = 200, height = 150): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: colour } }).jpeg({ quality: 95 }).toBuffer();
}

export async function uploadFile(
  baseUrl: string,
  user: TestUser,
  draftId: string | null,
  bytes: Buffer,
  options: { name?: string; type?: string; purpose?: 'image' | 'reference' } = {},
): Promise<JsonResponse> {
  const form = new FormData();
  if (draftId !== null) form.append('draftId', draftId);
  if (options.purpose) form.append('purpose', options.purpose);
  form.append('file', new Blob([new Uint8Array(bytes)], { type: options.type ?? 'image/png' }), options.name ?? 'render.png');
  return request(baseUrl, '/api/enhance-set/drafts/upload', { method: 'POST', body: form, token: user.token });
}

/** Uploads and registers one image; returns its id. */
export async function addImage(baseUrl: string, user: TestUser, draftId: string, bytes?: Buffer, name = 'render.png'): Promise<string> {
  const up = await uploadFile(baseUrl, user, draftId, bytes ?? (await renderPng()), { name });
  if (up.status !== 200) throw new Error(`upload: ${up.status} ${JSON.stringify(up.body)}`);
  const added = await request<{ images: Array<{ id: string }> }>(baseUrl, '/api/enhance-set/drafts/add-images', {
    token: user.token,
    json: { draftId, images: [{ source_type: 'uploaded', source_url: up.body.url, name, metadata: {} }] },
  });
  if (added.status !== 200) throw new Error(`add-images: ${added.status} ${JSON.stringify(added.body)}`);
  return added.body.images[0].id;
}

export interface DraftImageBody {
  id: string;
  name: string;
  source_url: string;
  resolved_url: string;
  order_index: number;
  source_type: string;
  metadata: {
    storage: { bucket: string; path: string };
    previous_url: string | null;
    history: Array<{ url: string; signed_url: string; storage: { bucket: string; path: string }; source: string; job_id?: string; model_id?: string }>;
    width: number;
    height: number;
  };
  job: { id: string; status: string } | null;
  last_job: { id: string; status: string; error: string | null } | null;
}

export async function getDraft(baseUrl: string, user: TestUser, draftId: string): Promise<JsonResponse<{ success: boolean; draft: { id: string; name: string }; images: DraftImageBody[] }>> {
  return request(baseUrl, `/api/enhance-set/drafts/get?draftId=${draftId}`, { token: user.token });
}

export async function dispatch(baseUrl: string, user: TestUser, body: Record<string, unknown>): Promise<JsonResponse> {
  return request(baseUrl, '/api/enhance-set/jobs/dispatch', { token: user.token, json: body });
}

/** Reads the draft until no image has an unfinished job (or the deadline passes). */
export async function waitForJobs(baseUrl: string, user: TestUser, draftId: string, timeoutMs = 60_000): Promise<DraftImageBody[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await getDraft(baseUrl, user, draftId);
    if (res.status !== 200) throw new Error(`get: ${res.status} ${JSON.stringify(res.body)}`);
    if (res.body.images.every((i) => i.job === null)) return res.body.images;
    if (Date.now() > deadline) throw new Error(`jobs still running: ${JSON.stringify(res.body.images.map((i) => i.job))}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Fetches a signed link of the app and returns the bytes. */
export async function download(baseUrl: string, signedUrl: string): Promise<Buffer> {
  const res = await fetch(new URL(signedUrl, baseUrl));
  if (res.status !== 200) throw new Error(`download ${signedUrl}: ${res.status}`);
  return Buffer.from(await res.arrayBuffer());
}
