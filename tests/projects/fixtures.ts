import type { Knex } from 'knex';
import type { Sharp } from 'sharp';
import { gaussianNoise } from '../support/stills';
import { createApp } from '../../api/app';
import { loadConfig, type AppConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { createTestUser, type TestUser } from '../support/accounts';
import { testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';

export interface ProjectsTestApp {
  server: TestServer;
  config: AppConfig;
}

export async function startProjectsApp(overrides: Partial<AppConfig> = {}): Promise<ProjectsTestApp> {
  const config = { ...loadConfig(), ...overrides };
  const server = await serve(createApp({ config, knex: testKnex(), logger }));
  return { server, config };
}

/** A signed-up, verified user; `knex` is the app's database when the file serves it on one of its own. */
export async function newUser(baseUrl: string, knex?: Knex): Promise<TestUser> {
  return createTestUser(baseUrl, { knex });
}

export async function createProject(baseUrl: string, user: TestUser, name = 'Harbour View', address?: string): Promise<{ id: string; name: string }> {
  const res = await request<{ project: { id: string; name: string } }>(baseUrl, '/api/projects', { token: user.token, json: { name, address } });
  if (res.status !== 201) throw new Error(`createProject answered ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.project;
}

/** Noise does not compress, so the encoded size tracks the pixel count (a realistic large render). */
export function noiseImage(width: number, height: number, seedShift = 0): Promise<Sharp> {
  return gaussianNoise(width, height, { mean: 128 + seedShift, sigma: 40 });
}

export async function pngBytes(width = 64, height = 36, seedShift = 0): Promise<Buffer> {
  return (await noiseImage(width, height, seedShift)).png().toBuffer();
}

export async function jpegBytes(width = 64, height = 48): Promise<Buffer> {
  return (await noiseImage(width, height)).jpeg({ quality: 80 }).toBuffer();
}

export async function gifBytes(width = 40, height = 40): Promise<Buffer> {
  return (await noiseImage(width, height)).gif().toBuffer();
}

export async function webpBytes(width = 90, height = 160): Promise<Buffer> {
  return (await noiseImage(width, height)).webp().toBuffer();
}

/** The first bytes of an MP4 (ISO base media 'ftyp' box, brand isom) followed by filler. */
export function mp4Bytes(): Buffer {
  const ftyp = Buffer.from([0x00, 0x00, 0x00, 0x20, 0x66, 0x74, 0x79, 0x70, 0x69, 0x73, 0x6f, 0x6d, 0x00, 0x00, 0x02, 0x00]);
  return Buffer.concat([ftyp, Buffer.alloc(2048, 7)]);
}

export interface UploadPart {
  bytes: Buffer;
  fileName: string;
  type?: string;
}

/** A multipart upload of one file with the given fields; `fieldsFirst` controls the order of the parts. */
export function uploadForm(file: UploadPart, fields: Record<string, string>, fieldsFirst = true): FormData {
  const form = new FormData();
  const appendFields = (): void => Object.entries(fields).forEach(([k, v]) => form.append(k, v));
  if (fieldsFirst) appendFields();
  form.append('file', new Blob([new Uint8Array(file.bytes)], { type: file.type ?? 'application/octet-stream' }), file.fileName);
  if (!fieldsFirst) appendFields();
  return form;
}

export interface UploadAnswer {
  success: boolean;
  duplicate?: boolean;
  url?: string;
  error?: string;
  code?: string;
  render?: { type: string; data: Record<string, unknown> & { id: string; thumbnail_url: string | null }; signed_url: string };
  processingInfo?: { width: number; height: number; aspectRatio: string; fileSize: number; mimeType: string; checksum: string; thumbnailUrl: string | null };
}

export async function uploadRender(
  baseUrl: string,
  user: TestUser | null,
  projectId: string,
  file: UploadPart,
  options: { fieldsFirst?: boolean; userId?: string } = {},
): Promise<{ status: number; body: UploadAnswer }> {
  const form = uploadForm(file, { projectId, userId: options.userId ?? user?.id ?? '' }, options.fieldsFirst ?? true);
  return request<UploadAnswer>(baseUrl, '/api/upload/renders', { method: 'POST', body: form, token: user?.token });
}

export async function fetchBytes(baseUrl: string, url: string): Promise<{ status: number; bytes: Buffer; type: string | null }> {
  const res = await fetch(new URL(url, baseUrl));
  return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()), type: res.headers.get('content-type') };
}
