/**
 * Issue 44, acceptance 1 and 7: the brand kit's API. Every member reads the kit (the default one until an admin saves
 * one); admins and owners change it. A logo is accepted by its content (PNG, JPEG, WebP, safe SVG) and stored as a
 * PNG with its transparency; every bad input (a corrupt file, an SVG with a script, an event handler, a foreignObject,
 * an entity declaration or an external reference, a 50 MB file with or without its length, an empty or unknown font)
 * gets a clear 4xx and stores nothing.
 */
import type { Knex } from 'knex';
import sharp from 'sharp';
import { createApp } from '../../api/app';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { BRAND_KIT_CODES, BRAND_KIT_MSG, DEFAULT_BRAND_KIT, svgProblem, type BrandKitView } from '../../domain/brandKit';
import { BRAND_LOGO_BUCKET } from '../../services/workspaces/brandKit';
import { closeTemporalClient } from '../../services/platform/temporalClient';
import { createStorage, type Storage } from '../../storage';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';
import { createTeamWithRoles, createTeamWorkspace, type TeamWithRoles } from '../support/workspaces';

let knex: Knex;
let server: TestServer;
let storage: Storage;
let team: TeamWithRoles;

beforeAll(async () => {
  knex = testKnex();
  const config = loadConfig();
  storage = createStorage(config);
  server = await serve(createApp({ config, knex, logger }));
  team = await createTeamWithRoles(server.baseUrl);
});

afterAll(async () => {
  await server.close();
  await closeTemporalClient();
  await closeTestKnex();
});

type KitAnswer = { success: boolean; brandKit: BrandKitView; code?: string; error?: string };

const kitPath = () => `/api/workspaces/${team.id}/brand-kit`;
const getKit = (token: string) => request<KitAnswer>(server.baseUrl, kitPath(), { token });
const putKit = (token: string, json: unknown) => request<KitAnswer>(server.baseUrl, kitPath(), { method: 'PUT', token, json });
const putLogo = (token: string, body: Buffer, type = 'application/octet-stream') =>
  request<KitAnswer>(server.baseUrl, `${kitPath()}/logo`, { method: 'PUT', token, body, headers: { 'content-type': type } });

const goodKit = {
  primaryColor: '#0a5c8a',
  secondaryColor: '#F2B134',
  font: 'Lato',
  contact: { company: 'Harbour Estates', phone: '+44 20 7946 0000', website: 'harbour.example' },
  callToAction: 'Book a viewing',
};

async function storedLogos(): Promise<string[]> {
  return (await storage.objects.list(BRAND_LOGO_BUCKET, `brand/${team.id}`)).map((o) => o.path);
}

async function kitRow(): Promise<Record<string, unknown> | undefined> {
  return knex('brand_kits').where({ workspace_id: team.id }).first();
}

/** A 64x32 PNG, transparent but for an opaque red square in the middle. */
async function transparentPng(): Promise<Buffer> {
  const square = await sharp({ create: { width: 16, height: 16, channels: 4, background: { r: 255, g: 0, b: 0, alpha: 1 } } }).png().toBuffer();
  return sharp({ create: { width: 64, height: 32, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } })
    .composite([{ input: square, left: 24, top: 8 }])
    .png()
    .toBuffer();
}

async function download(url: string): Promise<Buffer> {
  const res = await fetch(new URL(url, server.baseUrl));
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

describe('GET and PUT /api/workspaces/:id/brand-kit', () => {
  it('answers the default kit, without a logo, to every member until one is saved', async () => {
    for (const user of Object.values(team.byRole)) {
      const res = await getKit(user.token);
      expect(res.status).toBe(200);
      expect(res.body.brandKit).toMatchObject({ ...DEFAULT_BRAND_KIT, workspaceId: team.id, logoUrl: null, updatedAt: null });
    }
    expect((await getKit(team.outsider.token)).status).toBe(404);
  });

  it('lets admins and owners save it, and refuses members and viewers (403) and outsiders (404) without storing anything', async () => {
    for (const user of [team.member, team.viewer]) {
      const res = await putKit(user.token, goodKit);
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('WORKSPACE_FORBIDDEN');
    }
    expect((await putKit(team.outsider.token, goodKit)).status).toBe(404);
    expect(await kitRow()).toBeUndefined();

    const saved = await putKit(team.admin.token, goodKit);
    expect(saved.status).toBe(200);
    expect(saved.body.brandKit).toMatchObject({ ...goodKit, primaryColor: '#0A5C8A', updatedBy: team.admin.id });
    const read = await getKit(team.viewer.token);
    expect(read.body.brandKit).toMatchObject({ font: 'Lato', contact: goodKit.contact });
    expect((await putKit(team.owner.token, { ...goodKit, font: 'Roboto' })).body.brandKit.font).toBe('Roboto');
  });

  it.each([
    ['an empty font choice', { ...goodKit, font: '' }, BRAND_KIT_MSG.fontRequired],
    ['a font not in the set', { ...goodKit, font: 'Comic Sans MS' }, BRAND_KIT_MSG.fontRequired],
    ['no font', { ...goodKit, font: undefined }, BRAND_KIT_MSG.fontRequired],
    ['a font of spaces', { ...goodKit, font: '   ' }, BRAND_KIT_MSG.fontRequired],
    ['a null font', { ...goodKit, font: null }, BRAND_KIT_MSG.fontRequired],
    ['a font family in other letter case', { ...goodKit, font: 'inter' }, BRAND_KIT_MSG.fontRequired],
    ['a colour that is not #RRGGBB', { ...goodKit, primaryColor: 'red' }, BRAND_KIT_MSG.colorInvalid],
    ['a contact line over 80 characters', { ...goodKit, contact: { ...goodKit.contact, company: 'x'.repeat(81) } }, BRAND_KIT_MSG.contactTooLong],
  ])('refuses %s with 400 and a clear message, changing nothing', async (_name, body, message) => {
    const before = await kitRow();
    const res = await putKit(team.admin.token, body);
    expect(res.status).toBe(400);
    expect(res.body.error).toContain(message);
    expect(await kitRow()).toEqual(before);
  });
});

describe('PUT and DELETE /api/workspaces/:id/brand-kit/logo', () => {
  it('stores a PNG as a PNG with its transparency, and a member may not replace it', async () => {
    expect((await putLogo(team.member.token, await transparentPng())).status).toBe(403);
    expect(await storedLogos()).toEqual([]);

    const res = await putLogo(team.admin.token, await transparentPng(), 'image/png');
    expect(res.status).toBe(200);
    expect(res.body.brandKit).toMatchObject({ logoWidth: 64, logoHeight: 32 });
    const png = await download(res.body.brandKit.logoUrl as string);
    const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
    expect(info.channels).toBe(4);
    const alphaAt = (x: number, y: number) => data[(y * info.width + x) * 4 + 3];
    expect(alphaAt(0, 0)).toBe(0);
    expect(alphaAt(32, 16)).toBe(255);
    expect(await storedLogos()).toHaveLength(1);
  });

  it('rasterises a safe SVG (by its content, whatever the type says) and removes the logo it replaces', async () => {
    const before = await storedLogos();
    const svg = Buffer.from(
      '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="200" height="100">' +
        '<defs><linearGradient id="g"><stop offset="0" stop-color="#0a5c8a"/><stop offset="1" stop-color="#f2b134"/></linearGradient></defs>' +
        '<rect x="10" y="10" width="180" height="80" fill="url(#g)"/><use xlink:href="#g"/></svg>',
    );
    const res = await putLogo(team.admin.token, svg, 'application/octet-stream');
    expect(res.status).toBe(200);
    // drawn at the size that fits 1024 x 1024, transparent around the shape
    expect(res.body.brandKit).toMatchObject({ logoWidth: 1024, logoHeight: 512 });
    const meta = await sharp(await download(res.body.brandKit.logoUrl as string)).metadata();
    expect(meta).toMatchObject({ format: 'png', hasAlpha: true });
    const after = await storedLogos();
    expect(after).toHaveLength(1);
    expect(after).not.toEqual(before);
  });

  it('accepts an SVG as drawing programs save it: an XML declaration and the SVG 1.1 DOCTYPE', async () => {
    const svg = Buffer.from(
      '<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n' +
        '<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">\n' +
        '<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="300" height="100"><circle cx="50" cy="50" r="40" fill="#0a5c8a"/></svg>\n',
    );
    const res = await putLogo(team.admin.token, svg, 'image/svg+xml');
    expect(res.status).toBe(200);
    expect(res.body.brandKit).toMatchObject({ logoWidth: 1024, logoHeight: 341 });
    expect(await storedLogos()).toHaveLength(1);
  });

  it('accepts a JPEG and a WebP', async () => {
    const photo = sharp({ create: { width: 40, height: 40, channels: 3, background: '#0a5c8a' } });
    for (const file of [await photo.clone().jpeg().toBuffer(), await photo.clone().webp().toBuffer()]) {
      const res = await putLogo(team.owner.token, file);
      expect(res.status).toBe(200);
      expect(res.body.brandKit.logoWidth).toBe(40);
    }
    expect(await storedLogos()).toHaveLength(1);
  });

  const external = (attr: string) => `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="10" height="10"><image ${attr} width="10" height="10"/></svg>`;
  it.each([
    ['a script', '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script><rect width="10" height="10"/></svg>', BRAND_KIT_CODES.svgUnsafe],
    ['an event handler', '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10" onload="alert(1)"><rect width="10" height="10"/></svg>', BRAND_KIT_CODES.svgUnsafe],
    ['a foreignObject', '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><foreignObject width="10" height="10"><p>hi</p></foreignObject></svg>', BRAND_KIT_CODES.svgUnsafe],
    ['an external xlink:href', external('xlink:href="https://evil.example/x.png"'), BRAND_KIT_CODES.svgUnsafe],
    ['an external href', external("href='file:///etc/passwd'"), BRAND_KIT_CODES.svgUnsafe],
    ['an external <use> sprite', '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><use href="https://evil.example/sprite.svg#logo"/></svg>', BRAND_KIT_CODES.svgUnsafe],
    ['a javascript: link', '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="10" height="10"><a xlink:href="javascript:alert(1)"><rect width="10" height="10"/></a></svg>', BRAND_KIT_CODES.svgUnsafe],
    ['an entity reading a local file', '<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><text>&x;</text></svg>', BRAND_KIT_CODES.svgUnsafe],
    ['a CSS @import of another file', '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><style>@import "https://evil.example/x.css";</style><rect width="10" height="10"/></svg>', BRAND_KIT_CODES.svgUnsafe],
    ['an external CSS url()', '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect style="fill:url(http://evil.example/p)" width="10" height="10"/></svg>', BRAND_KIT_CODES.svgUnsafe],
    ['a corrupt PNG', 'CORRUPT_PNG', BRAND_KIT_CODES.logoInvalid],
    ['a text file', 'just some text, not an image', BRAND_KIT_CODES.logoInvalid],
    ['an empty body', '', BRAND_KIT_CODES.logoInvalid],
  ])('refuses an upload with %s (400) and stores nothing', async (_name, content, code) => {
    const before = { logos: await storedLogos(), row: await kitRow() };
    let body = Buffer.from(content);
    // the first 200 bytes of a real PNG: a valid header, pixels cut off
    if (content === 'CORRUPT_PNG') body = (await sharp({ create: { width: 300, height: 300, channels: 3, background: '#123456' } }).png().toBuffer()).subarray(0, 200);
    const res = await putLogo(team.admin.token, body, content.startsWith('<svg') || content.startsWith('<?xml') ? 'image/svg+xml' : 'image/png');
    expect(res.status).toBe(400);
    expect(res.body.code).toBe(code);
    expect(res.body.error).toMatch(code === BRAND_KIT_CODES.svgUnsafe ? /^The SVG logo was refused: it / : /PNG, JPEG, WebP or SVG|Send the logo/);
    expect({ logos: await storedLogos(), row: await kitRow() }).toEqual(before);
  });

  it('refuses a 50 MB logo with 413, storing nothing', async () => {
    const before = { logos: await storedLogos(), row: await kitRow() };
    const huge = Buffer.concat([await transparentPng(), Buffer.alloc(50 * 1024 * 1024)]);
    const res = await putLogo(team.admin.token, huge, 'image/png');
    expect(res.status).toBe(413);
    expect(res.body.code).toBe(BRAND_KIT_CODES.logoTooLarge);
    expect({ logos: await storedLogos(), row: await kitRow() }).toEqual(before);
  });

  it('refuses a 50 MB logo sent without a length (chunked) with 413 once it passes 5 MB, storing nothing', async () => {
    const before = { logos: await storedLogos(), row: await kitRow() };
    const head = await transparentPng();
    const chunk = Buffer.alloc(1024 * 1024);
    let sent = 0;
    // a stream of unknown length: fetch sends it chunked, with no Content-Length for the API to refuse up front
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(head);
        if (sent >= 50) return controller.close();
        sent += 1;
        controller.enqueue(chunk);
      },
    });
    const res = await fetch(`${server.baseUrl}${kitPath()}/logo`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${team.admin.token}`, 'content-type': 'image/png' },
      body,
      duplex: 'half',
    } as RequestInit & { duplex: 'half' });
    expect(res.headers.get('content-length')).not.toBeNull();
    expect(res.status).toBe(413);
    const answer = (await res.json()) as { code: string; error: string };
    expect(answer).toMatchObject({ code: BRAND_KIT_CODES.logoTooLarge, error: BRAND_KIT_MSG.logoTooLarge });
    expect({ logos: await storedLogos(), row: await kitRow() }).toEqual(before);
  });

  it('removes the logo and its file (admins only)', async () => {
    expect((await request(server.baseUrl, `${kitPath()}/logo`, { method: 'DELETE', token: team.viewer.token })).status).toBe(403);
    expect(await storedLogos()).toHaveLength(1);
    const res = await request<KitAnswer>(server.baseUrl, `${kitPath()}/logo`, { method: 'DELETE', token: team.admin.token });
    expect(res.status).toBe(200);
    expect(res.body.brandKit.logoUrl).toBeNull();
    expect(await storedLogos()).toEqual([]);
  });
});

describe('deleting the workspace', () => {
  it('removes its brand kit and its logo file', async () => {
    const other = await createTeamWorkspace(server.baseUrl);
    const up = await request<KitAnswer>(server.baseUrl, `/api/workspaces/${other.id}/brand-kit/logo`, {
      method: 'PUT',
      token: other.owner.token,
      body: await transparentPng(),
      headers: { 'content-type': 'image/png' },
    });
    expect(up.status).toBe(200);
    expect(await storage.objects.list(BRAND_LOGO_BUCKET, `brand/${other.id}`)).toHaveLength(1);
    expect((await request(server.baseUrl, `/api/workspaces/${other.id}`, { method: 'DELETE', token: other.owner.token })).status).toBe(200);
    expect(await storage.objects.list(BRAND_LOGO_BUCKET, `brand/${other.id}`)).toEqual([]);
    expect(await knex('brand_kits').where({ workspace_id: other.id }).first()).toBeUndefined();
  });
});

describe('svgProblem', () => {
  it('lets fragment and data: references through, and finds what hides in upper case or other prefixes', () => {
    expect(svgProblem('<svg><use href="#a"/><image href="data:image/png;base64,AAAA"/></svg>')).toBeNull();
    expect(svgProblem('<svg><!-- <script> in a comment --></svg>')).toBeNull();
    expect(svgProblem('<svg><SCRIPT>x</SCRIPT></svg>')).toBe('contains a script');
    expect(svgProblem('<svg><svg:script>x</svg:script></svg>')).toBe('contains a script');
    expect(svgProblem('<svg><rect ONCLICK="x"/></svg>')).toBe('contains an event handler');
    expect(svgProblem('<!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]><svg>&x;</svg>')).toBe('declares entities');
    expect(svgProblem('<svg><style>@import "https://x/y.css";</style></svg>')).toBe('refers to an external file');
  });
});
