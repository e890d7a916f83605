/**
 * The soak's users, made through the API as people make them: signed up, given credits by an admin through the admin
 * endpoint (the ledger's path for a grant), each with projects holding a few renders. Also the JPEGs the virtual users
 * upload: distinct pictures (a gradient and a grid of blocks per seed), so most uploads are new renders, not duplicates.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Knex } from 'knex';
import sharp from 'sharp';
import { grantAdminRole } from '../../services/accounts/admin';

export const SOAK_PASSWORD = 'soak-password-1';

export interface SeededUser {
  id: string;
  email: string;
  password: string;
  token: string;
  projects: Array<{ id: string; name: string }>;
  renders: Array<{ projectId: string; id: string; fileUrl: string }>;
}

/** A 640x480 JPEG that differs from the one of any other seed. */
export async function soakImage(seed: number): Promise<Buffer> {
  const width = 640;
  const height = 480;
  const raw = Buffer.alloc(width * height * 3);
  const a = (seed * 53) % 255;
  const b = (seed * 97) % 255;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const block = ((Math.floor(x / 40) * 7 + Math.floor(y / 40) * 13 + seed * 31) % 17) * 9;
      const i = (y * width + x) * 3;
      raw[i] = (a + (x * 255) / width + block) % 256;
      raw[i + 1] = (b + (y * 255) / height) % 256;
      raw[i + 2] = (block + seed * 17) % 256;
    }
  }
  return sharp(raw, { raw: { width, height, channels: 3 } }).jpeg({ quality: 80 }).toBuffer();
}

/** Writes `count` distinct JPEGs into `dir`; answers their paths. */
export async function writeSoakImages(dir: string, count: number): Promise<string[]> {
  fs.mkdirSync(dir, { recursive: true });
  const files: string[] = [];
  for (let i = 0; i < count; i++) {
    const file = path.join(dir, `render-${String(i + 1).padStart(2, '0')}.jpg`);
    fs.writeFileSync(file, await soakImage(1000 + i));
    files.push(file);
  }
  return files;
}

async function api<T>(baseUrl: string, route: string, init: { token?: string; json?: unknown; form?: FormData; method?: string } = {}): Promise<T> {
  const res = await fetch(`${baseUrl}${route}`, {
    method: init.method ?? (init.json !== undefined || init.form ? 'POST' : 'GET'),
    headers: { ...(init.token ? { authorization: `Bearer ${init.token}` } : {}), ...(init.json !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: init.json !== undefined ? JSON.stringify(init.json) : init.form,
    signal: AbortSignal.timeout(120_000),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`seeding: ${init.method ?? 'POST'} ${route} answered ${res.status}: ${text.slice(0, 200)}`);
  return JSON.parse(text) as T;
}

/** The smallest package through the API's checkout and the local test-mode Stripe (devStripe), which pays and calls the webhook. */
async function buyPackage(baseUrl: string, token: string): Promise<void> {
  const { url } = await api<{ url: string }>(baseUrl, '/api/stripe/create-checkout-session', { token, json: { packageId: 'small' } });
  const paid = await fetch(url, { method: 'POST', redirect: 'manual', signal: AbortSignal.timeout(30_000) });
  if (paid.status >= 400) throw new Error(`the checkout answered ${paid.status}`);
}

interface SignedIn {
  token: string;
  user: { id: string; email: string };
}

async function signUp(baseUrl: string, email: string, name: string): Promise<SignedIn> {
  return api<SignedIn>(baseUrl, '/api/auth/signup', { json: { name, email, password: SOAK_PASSWORD } });
}

export interface SeedOptions {
  baseUrl: string;
  knex: Knex;
  users: number;
  projectsPerUser: number;
  rendersPerProject: number;
  creditsPerUser: number;
  images: readonly string[];
  /** unique per run, in the e-mail addresses */
  runId: string;
  log: (line: string) => void;
}

/** Signs up the users and an admin, grants credits through POST /api/admin/credits/adjust, makes projects and renders. */
export async function seedUsers(options: SeedOptions): Promise<{ users: SeededUser[]; admin: SignedIn }> {
  const { baseUrl, knex, runId, log } = options;
  const adminEmail = `soak-admin-${runId}@soak.test`;
  await signUp(baseUrl, adminEmail, 'Soak Admin');
  await grantAdminRole(knex, adminEmail);
  // signed in again after the grant: the session reads the role it was made with
  const admin = await api<SignedIn>(baseUrl, '/api/auth/signin', { json: { email: adminEmail, password: SOAK_PASSWORD } });

  const users: SeededUser[] = [];
  let image = 0;
  for (let i = 0; i < options.users; i++) {
    const email = `soak-user-${runId}-${i + 1}@soak.test`;
    const signed = await signUp(baseUrl, email, `Soak User ${i + 1}`);
    await api(baseUrl, '/api/admin/credits/adjust', {
      token: admin.token,
      json: { userId: signed.user.id, amount: options.creditsPerUser, reason: 'Soak benchmark credits', idempotencyKey: `soak-${runId}-${i + 1}` },
    });
    // one package bought through the checkout, as a customer does: rejecting an item needs a past purchase
    await buyPackage(baseUrl, signed.token).catch((err: Error) => log(`${email} could not buy a package (${err.message}); its rejections will be refused`));
    const user: SeededUser = { id: signed.user.id, email, password: SOAK_PASSWORD, token: signed.token, projects: [], renders: [] };
    for (let p = 0; p < options.projectsPerUser; p++) {
      const { project } = await api<{ project: { id: string; name: string } }>(baseUrl, '/api/projects', { token: signed.token, json: { name: `Soak project ${p + 1}` } });
      user.projects.push({ id: project.id, name: project.name });
      for (let r = 0; r < options.rendersPerProject; r++) {
        const file = options.images[image++ % options.images.length];
        const form = new FormData();
        form.append('projectId', project.id);
        form.append('file', new Blob([fs.readFileSync(file)], { type: 'image/jpeg' }), path.basename(file));
        const uploaded = await api<{ render: { data: { id: string; file_url: string } } }>(baseUrl, '/api/upload/renders', { token: signed.token, form });
        user.renders.push({ projectId: project.id, id: uploaded.render.data.id, fileUrl: uploaded.render.data.file_url });
      }
    }
    users.push(user);
    if ((i + 1) % 10 === 0 || i + 1 === options.users) log(`seeded ${i + 1} of ${options.users} users`);
  }
  return { users, admin };
}
