/**
 * Projects, the library, uploads (multipart and tus), downloads and lineage in a team workspace (DESIGN.md "Teams
 * (workspaces)"): members of every role against one workspace's project, and a user who is not a member.
 *
 * - a member uploads a render (multipart and tus) into the workspace's project and every other member sees it;
 * - a viewer lists and downloads an approved item, but creating, renaming and deleting projects and items, uploading
 *   (multipart, tus creation, resuming a member's tus upload) and assembling are 403 with nothing changed (rows,
 *   stored files, tus files);
 * - a non-member gets 404 on the project and its content, and nothing changes.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Knex } from 'knex';
import { addCredits } from '../../services/billing/credits';
import { insertPendingApproval } from '../support/credits';
import type { TestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { request, type TestServer } from '../support/http';
import { runBackend, storedUnder } from '../support/objectStorage';
import type { AppConfig } from '../../config/env';
import { createProject, fetchBytes, newUser, pngBytes, startProjectsApp, uploadRender, type UploadAnswer } from '../projects/fixtures';

const TUS = { 'tus-resumable': '1.0.0' };
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const metadata = (m: Record<string, string>) =>
  Object.entries(m)
    .map(([k, v]) => `${k} ${b64(v)}`)
    .join(',');

type Role = 'owner' | 'admin' | 'member' | 'viewer';

let server: TestServer;
let config: AppConfig;
let knex: Knex;
const people = {} as Record<Role | 'outsider', TestUser>;
let workspaceId: string;
let projectId: string;

/** A team workspace as the workspaces service makes one: the workspace, its account row (same id), funded through the ledger, and its members. */
async function createTeamWorkspace(db: Knex, name: string, members: Array<{ user: TestUser; role: Role }>): Promise<string> {
  const owner = members.find((m) => m.role === 'owner')?.user as TestUser;
  const [row] = await db('workspaces').insert({ name, created_by: owner.id }).returning<{ id: string }[]>('id');
  await db('profiles').insert({ id: row.id, email: owner.email, name });
  await addCredits(db, { workspaceId: row.id, amount: 20, type: 'signup_bonus', description: 'Team credits', idempotencyKey: `team:${row.id}` });
  await db('workspace_members').insert(members.map((m) => ({ workspace_id: row.id, user_id: m.user.id, role: m.role })));
  return row.id;
}

function inWorkspace(id: string): Record<string, string> {
  return { 'x-workspace-id': id };
}

/**
 * The stored files a refused call could have written: the workspace's folders and those of the viewer's and the
 * outsider's own accounts (other test files of the run share its storage, so not all of it).
 */
async function storedFiles(): Promise<string[]> {
  const found: string[] = [];
  for (const account of [workspaceId, people.viewer.id, people.outsider.id]) {
    for (const [bucket, prefix] of [['renders', account], ['renders', `thumbs/${account}`], ['renders', `previews/${account}`], ['videos', account], ['clips', account]] as const) {
      found.push(...(await storedUnder(bucket, prefix)).map((p) => `${bucket}/${p}`));
    }
  }
  return found.sort();
}

async function tusFilesWithoutUpload(tusDir: string): Promise<string[]> {
  if (runBackend() !== 'local' || !fs.existsSync(tusDir)) return [];
  const ids = [...new Set(fs.readdirSync(tusDir).map((name) => name.replace(/\.json$/, '')))];
  const known = new Set((await knex('resumable_uploads').whereIn('id', ids).select('id')).map((r: { id: string }) => r.id));
  return ids.filter((id) => !known.has(id)).sort();
}

/** What a refused call must leave as it was: the workspace's rows, its stored files and the tus store's files. */
async function snapshot(): Promise<Record<string, unknown>> {
  const rows = async (table: string, key = 'id') => (await knex(table).where({ workspace_id: workspaceId }).orderBy(key)) as unknown[];
  const tusDir = path.join(path.resolve(config.storageDir), '.tus-uploads');
  return {
    projects: await rows('projects'),
    renders: await rows('renders'),
    uploads: await rows('resumable_uploads'),
    assemblies: await rows('assembly_jobs'),
    chats: await rows('aesthetic_chats', 'project_id'),
    files: await storedFiles(),
    // a tus file is made only after its upload's row (other test files' uploads have theirs): none without one
    tusFilesWithoutUpload: await tusFilesWithoutUpload(tusDir),
  };
}

async function uploadByTus(user: TestUser, project: string, bytes: Buffer, fileName: string): Promise<{ status: number; body: string; location: string | null }> {
  const created = await fetch(`${server.baseUrl}/api/uploads/tus`, {
    method: 'POST',
    headers: { ...TUS, authorization: `Bearer ${user.token}`, 'upload-length': String(bytes.length), 'upload-metadata': metadata({ filename: fileName, filetype: 'image/png', projectId: project }) },
  });
  const location = created.headers.get('location');
  if (created.status !== 201 || !location) return { status: created.status, body: await created.text(), location };
  const done = await fetch(`${server.baseUrl}${location}`, {
    method: 'PATCH',
    headers: { ...TUS, authorization: `Bearer ${user.token}`, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
    body: new Uint8Array(bytes),
  });
  return { status: done.status, body: await done.text(), location };
}

async function listing(user: TestUser, project = projectId): Promise<{ status: number; ids: string[]; items: Array<{ source: string; data: { id: string; name: string }; signed_url: string | null }> }> {
  const res = await request<{ content: Array<{ source: string; data: { id: string; name: string }; signed_url: string | null }> }>(server.baseUrl, `/api/projects/${project}/content?refresh=1`, {
    token: user.token,
  });
  const items = res.status === 200 ? res.body.content : [];
  return { status: res.status, ids: items.map((i) => i.data.id), items };
}

beforeAll(async () => {
  const app = await startProjectsApp();
  server = app.server;
  config = app.config;
  knex = testKnex();
  for (const who of ['owner', 'admin', 'member', 'viewer', 'outsider'] as const) people[who] = await newUser(server.baseUrl);
  workspaceId = await createTeamWorkspace(knex, 'Harbour Studio', [
    { user: people.owner, role: 'owner' },
    { user: people.admin, role: 'admin' },
    { user: people.member, role: 'member' },
    { user: people.viewer, role: 'viewer' },
  ]);
  const created = await request<{ project: { id: string; user_id: string } }>(server.baseUrl, '/api/projects', {
    token: people.owner.token,
    headers: inWorkspace(workspaceId),
    json: { name: 'Team Harbour' },
  });
  expect(created.status).toBe(201);
  projectId = created.body.project.id;
});

afterAll(async () => {
  await server.close();
  await closeTestKnex();
});

describe('projects of a team workspace', () => {
  it('are created in the request workspace and listed for every member of it, not in their personal lists', async () => {
    const row = await knex('projects').where({ id: projectId }).first();
    expect(row.workspace_id).toBe(workspaceId);
    for (const role of ['owner', 'admin', 'member', 'viewer'] as const) {
      const team = await request<{ projects: Array<{ id: string; user_id: string }> }>(server.baseUrl, '/api/projects/list', { token: people[role].token, headers: inWorkspace(workspaceId) });
      expect(team.status).toBe(200);
      expect(team.body.projects.map((p) => p.id)).toContain(projectId);
      expect(team.body.projects.every((p) => p.user_id === workspaceId)).toBe(true);
      // without a workspace named, the personal one, as for a person on their own
      const personal = await request<{ projects: Array<{ id: string }> }>(server.baseUrl, '/api/projects/list', { token: people[role].token });
      expect(personal.status).toBe(200);
      expect(personal.body.projects.map((p) => p.id)).not.toContain(projectId);
      // the project itself, named by id, is found by every member whatever workspace the request names
      const one = await request(server.baseUrl, `/api/projects/${projectId}`, { token: people[role].token });
      expect(one.status).toBe(200);
    }
  });

  it('a member creates and renames one; a member-made project belongs to the workspace, not to the member', async () => {
    const made = await request<{ project: { id: string; user_id: string } }>(server.baseUrl, '/api/projects', {
      token: people.member.token,
      headers: inWorkspace(workspaceId),
      json: { name: 'Member Made' },
    });
    expect(made.status).toBe(201);
    expect(made.body.project.user_id).toBe(workspaceId);
    const renamed = await request<{ project: { name: string } }>(server.baseUrl, `/api/projects/${made.body.project.id}`, { method: 'PATCH', token: people.admin.token, json: { name: 'Renamed by admin' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.project.name).toBe('Renamed by admin');
    const removed = await request(server.baseUrl, `/api/projects/${made.body.project.id}`, { method: 'DELETE', token: people.member.token });
    expect(removed.status).toBe(200);
    expect(await knex('projects').where({ id: made.body.project.id }).first()).toBeUndefined();
  });

  it("deleting a project gives back its pending items' credits to the workspace, recording the member who deleted it", async () => {
    const made = await request<{ project: { id: string } }>(server.baseUrl, '/api/projects', { token: people.member.token, headers: inWorkspace(workspaceId), json: { name: 'Pending inside' } });
    expect(made.status).toBe(201);
    const pending = await insertPendingApproval(knex, { userId: workspaceId, projectId: made.body.project.id, cost: 2, reserve: true });
    const account = await knex('profiles').where({ id: workspaceId }).first('reserved_credits');
    const removed = await request(server.baseUrl, `/api/projects/${made.body.project.id}`, { method: 'DELETE', token: people.member.token });
    expect(removed.status).toBe(200);
    const reservation = await knex('credit_reservations').where({ workspace_id: workspaceId }).whereRaw("metadata->>'releaseReason' = 'project deleted'").orderBy('created_at', 'desc').first();
    expect(reservation).toMatchObject({ status: 'released', amount: 2 });
    expect(reservation.metadata.releasedBy).toBe(people.member.id);
    expect(await knex('pending_approvals').where({ id: pending.id }).first()).toBeUndefined();
    expect((await knex('profiles').where({ id: workspaceId }).first('reserved_credits')).reserved_credits).toBe(account.reserved_credits - 2);
  });
});

describe('uploads into a team project', () => {
  it('a member uploads by multipart and by tus; the renders belong to the workspace and every member sees them', async () => {
    const multipart = await uploadRender(server.baseUrl, people.member, projectId, { bytes: await pngBytes(64, 36, 11), fileName: 'multipart.png', type: 'image/png' });
    expect(multipart.status).toBe(200);
    const multipartId = multipart.body.render?.data.id as string;

    const tus = await uploadByTus(people.member, projectId, await pngBytes(80, 45, 12), 'resumable.png');
    expect(tus.status).toBe(200);
    const tusId = (JSON.parse(tus.body) as UploadAnswer).render?.data.id as string;

    const rows = await knex('renders').whereIn('id', [multipartId, tusId]);
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(row.workspace_id).toBe(workspaceId);
      expect(row.project_id).toBe(projectId);
      // stored in the workspace's folder (removed with the workspace's data)
      expect(String(row.storage_path).startsWith(`${workspaceId}/`)).toBe(true);
    }
    const upload = await knex('resumable_uploads').where({ render_id: tusId }).first();
    expect(upload).toMatchObject({ workspace_id: workspaceId, status: 'completed' });

    for (const role of ['owner', 'admin', 'member', 'viewer'] as const) {
      const seen = await listing(people[role]);
      expect(seen.status).toBe(200);
      expect(seen.ids).toEqual(expect.arrayContaining([multipartId, tusId]));
    }
  });

  it('with the project id after the file and no workspace named, the file still lands in the workspace folder', async () => {
    const res = await uploadRender(server.baseUrl, people.member, projectId, { bytes: await pngBytes(40, 40, 13), fileName: 'late.png', type: 'image/png' }, { fieldsFirst: false });
    expect(res.status).toBe(200);
    const row = await knex('renders').where({ id: res.body.render?.data.id }).first();
    expect(row.workspace_id).toBe(workspaceId);
    expect(String(row.storage_path).startsWith(`${workspaceId}/`)).toBe(true);
    // nothing left behind in the member's personal folder
    expect(await storedUnder('renders', people.member.id)).toEqual([]);
  });
});

describe('a viewer', () => {
  let renderId: string;
  let signedUrl: string;

  beforeAll(async () => {
    const up = await uploadRender(server.baseUrl, people.member, projectId, { bytes: await pngBytes(50, 50, 21), fileName: 'for-viewer.png', type: 'image/png' });
    expect(up.status).toBe(200);
    renderId = up.body.render?.data.id as string;
    const seen = await listing(people.viewer);
    signedUrl = seen.items.find((i) => i.data.id === renderId)?.signed_url as string;
    expect(signedUrl).toBeTruthy();
  });

  it('lists, reads the lineage of, and downloads an approved item', async () => {
    const redirect = await fetch(`${server.baseUrl}/api/downloads?url=${encodeURIComponent(signedUrl)}&name=render.png`, {
      headers: { authorization: `Bearer ${people.viewer.token}` },
      redirect: 'manual',
    });
    expect(redirect.status).toBe(302);
    const file = await fetchBytes(server.baseUrl, redirect.headers.get('location') as string);
    expect(file.status).toBe(200);
    expect(file.bytes.length).toBeGreaterThan(0);

    const lineage = await request<{ item: { id: string } }>(server.baseUrl, `/api/content/${renderId}/lineage`, { token: people.viewer.token, headers: inWorkspace(workspaceId) });
    expect(lineage.status).toBe(200);
    expect(lineage.body.item.id).toBe(renderId);
    // not in the viewer's own (personal) workspace
    const personal = await request(server.baseUrl, `/api/content/${renderId}/lineage`, { token: people.viewer.token });
    expect(personal.status).toBe(404);
  });

  it('cannot upload (multipart or tus), create, rename or delete: 403 and nothing changes', async () => {
    // a tus upload of a member, in progress, which the viewer must not be able to resume or cancel
    const bytes = await pngBytes(60, 60, 22);
    const started = await fetch(`${server.baseUrl}/api/uploads/tus`, {
      method: 'POST',
      headers: { ...TUS, authorization: `Bearer ${people.member.token}`, 'upload-length': String(bytes.length), 'upload-metadata': metadata({ filename: 'open.png', projectId }) },
    });
    expect(started.status).toBe(201);
    const location = started.headers.get('location') as string;
    // (the tus store's files are where the snapshot looks for them)
    if (runBackend() === 'local') expect(fs.existsSync(path.join(path.resolve(config.storageDir), '.tus-uploads', location.split('/').pop() as string))).toBe(true);

    const before = await snapshot();
    const viewer = people.viewer;
    const refused: Array<[string, () => Promise<{ status: number; body?: unknown }>]> = [
      ['multipart upload', () => uploadRender(server.baseUrl, viewer, projectId, { bytes: Buffer.from(bytes), fileName: 'viewer.png', type: 'image/png' })],
      ['multipart upload, project after the file', () => uploadRender(server.baseUrl, viewer, projectId, { bytes: Buffer.from(bytes), fileName: 'viewer.png', type: 'image/png' }, { fieldsFirst: false })],
      ['tus creation', async () => uploadByTus(viewer, projectId, bytes, 'viewer.png')],
      ['tus resume', async () => {
        const res = await fetch(`${server.baseUrl}${location}`, {
          method: 'PATCH',
          headers: { ...TUS, authorization: `Bearer ${viewer.token}`, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
          body: new Uint8Array(bytes),
        });
        return { status: res.status };
      }],
      ['tus cancel', async () => ({ status: (await fetch(`${server.baseUrl}${location}`, { method: 'DELETE', headers: { ...TUS, authorization: `Bearer ${viewer.token}` } })).status })],
      ['create project', () => request(server.baseUrl, '/api/projects', { token: viewer.token, headers: inWorkspace(workspaceId), json: { name: 'Viewer project' } })],
      ['rename project', () => request(server.baseUrl, `/api/projects/${projectId}`, { method: 'PATCH', token: viewer.token, json: { name: 'Viewer rename' } })],
      ['delete project', () => request(server.baseUrl, `/api/projects/${projectId}`, { method: 'DELETE', token: viewer.token })],
      ['bulk delete', () => request(server.baseUrl, '/api/projects/bulk-delete', { token: viewer.token, json: { ids: [projectId] } })],
      ['rename item', () => request(server.baseUrl, `/api/projects/${projectId}/content/renders/${renderId}`, { method: 'PATCH', token: viewer.token, json: { name: 'Viewer name' } })],
      ['delete item', () => request(server.baseUrl, `/api/projects/${projectId}/content/renders/${renderId}`, { method: 'DELETE', token: viewer.token })],
      ['assemble', () => request(server.baseUrl, '/api/video/assemble', { token: viewer.token, json: { projectId, platform: 'youtube', contentItems: [] } })],
      ['dry-run', () => request(server.baseUrl, '/api/video-assembly/dry-run', { token: viewer.token, json: { projectId, clipIds: [] } })],
      ['chat message', () => request(server.baseUrl, `/api/projects/${projectId}/aesthetic`, { token: viewer.token, json: { message: 'Make it calm' } })],
      ['chat clip selection', () => request(server.baseUrl, `/api/projects/${projectId}/aesthetic/clips`, { method: 'PUT', token: viewer.token, json: { selected_clips: [] } })],
    ];
    for (const [what, call] of refused) {
      const res = await call();
      expect({ what, status: res.status }).toEqual({ what, status: 403 });
    }
    expect(await snapshot()).toEqual(before);

    // the member's upload is still theirs to finish
    const finished = await fetch(`${server.baseUrl}${location}`, {
      method: 'PATCH',
      headers: { ...TUS, authorization: `Bearer ${people.member.token}`, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
      body: new Uint8Array(bytes),
    });
    expect(finished.status).toBe(200);
  });

  it('gets the refusal text of the access module', async () => {
    const res = await request<{ error: string; code: string }>(server.baseUrl, `/api/projects/${projectId}/content/renders/${renderId}`, { method: 'DELETE', token: people.viewer.token });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('WORKSPACE_FORBIDDEN');
    expect(res.body.error).toMatch(/Viewer/);
  });
});

describe('a user who is not a member', () => {
  it('gets 404 on the project, its content, its items and its uploads, and nothing changes', async () => {
    const up = await uploadRender(server.baseUrl, people.member, projectId, { bytes: await pngBytes(30, 50, 31), fileName: 'private.png', type: 'image/png' });
    expect(up.status).toBe(200);
    const renderId = up.body.render?.data.id as string;
    const bytes = await pngBytes(30, 30, 32);
    const started = await fetch(`${server.baseUrl}/api/uploads/tus`, {
      method: 'POST',
      headers: { ...TUS, authorization: `Bearer ${people.member.token}`, 'upload-length': String(bytes.length), 'upload-metadata': metadata({ filename: 'open.png', projectId }) },
    });
    expect(started.status).toBe(201);
    const location = started.headers.get('location') as string;

    const before = await snapshot();
    const outsider = people.outsider;
    const calls: Array<[string, () => Promise<{ status: number }>]> = [
      ['project', () => request(server.baseUrl, `/api/projects/${projectId}`, { token: outsider.token })],
      ['content', () => request(server.baseUrl, `/api/projects/${projectId}/content`, { token: outsider.token })],
      ['content page', () => request(server.baseUrl, `/api/projects/${projectId}/content?limit=10`, { token: outsider.token })],
      ['rename project', () => request(server.baseUrl, `/api/projects/${projectId}`, { method: 'PATCH', token: outsider.token, json: { name: 'Taken' } })],
      ['delete project', () => request(server.baseUrl, `/api/projects/${projectId}`, { method: 'DELETE', token: outsider.token })],
      ['bulk delete', () => request(server.baseUrl, '/api/projects/bulk-delete', { token: outsider.token, json: { ids: [projectId] } })],
      ['rename item', () => request(server.baseUrl, `/api/projects/${projectId}/content/renders/${renderId}`, { method: 'PATCH', token: outsider.token, json: { name: 'Taken' } })],
      ['delete item', () => request(server.baseUrl, `/api/projects/${projectId}/content/renders/${renderId}`, { method: 'DELETE', token: outsider.token })],
      ['lineage', () => request(server.baseUrl, `/api/content/${renderId}/lineage`, { token: outsider.token })],
      ['upload', () => uploadRender(server.baseUrl, outsider, projectId, { bytes, fileName: 'outsider.png', type: 'image/png' })],
      ['tus creation', () => uploadByTus(outsider, projectId, bytes, 'outsider.png')],
      ['tus offset', async () => ({ status: (await fetch(`${server.baseUrl}${location}`, { method: 'HEAD', headers: { ...TUS, authorization: `Bearer ${outsider.token}` } })).status })],
      ['tus cancel', async () => ({ status: (await fetch(`${server.baseUrl}${location}`, { method: 'DELETE', headers: { ...TUS, authorization: `Bearer ${outsider.token}` } })).status })],
      ['chat', () => request(server.baseUrl, `/api/projects/${projectId}/aesthetic`, { token: outsider.token })],
      ['team project list', () => request(server.baseUrl, '/api/projects/list', { token: outsider.token, headers: inWorkspace(workspaceId) })],
      ['project in the team workspace', () => request(server.baseUrl, '/api/projects', { token: outsider.token, headers: inWorkspace(workspaceId), json: { name: 'Intruder' } })],
    ];
    for (const [what, call] of calls) {
      const res = await call();
      expect({ what, status: res.status }).toEqual({ what, status: 404 });
    }
    expect(await snapshot()).toEqual(before);
    // the outsider's own workspace did not gain the project either
    expect(await knex('projects').where({ workspace_id: outsider.id })).toEqual([]);
  });
});
