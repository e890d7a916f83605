/**
 * GET /api/downloads: a file link the API handed out, still valid, is redirected to one that saves the file under
 * the item's name (on either storage backend); anything else is refused with a 4xx, never a 5xx or Node's bare 431.
 */
import type { TestUser } from '../support/accounts';
import { closeTestKnex } from '../support/db';
import type { TestServer } from '../support/http';
import { createProject, newUser, pngBytes, startProjectsApp, uploadRender } from '../projects/fixtures';

let server: TestServer;
let owner: TestUser;
let link: string;

beforeAll(async () => {
  const app = await startProjectsApp();
  server = app.server;
  owner = await newUser(server.baseUrl);
  const projectId = (await createProject(server.baseUrl, owner, 'Downloads')).id;
  const res = await uploadRender(server.baseUrl, owner, projectId, { bytes: await pngBytes(64, 48), fileName: 'house.png', type: 'image/png' });
  expect(res.status).toBe(200);
  link = res.body.url as string;
});

afterAll(async () => {
  await server.close();
  await closeTestKnex();
});

const downloads = (query: Record<string, string>): Promise<Response> =>
  fetch(`${server.baseUrl}/api/downloads?${new URLSearchParams(query).toString()}`, {
    redirect: 'manual',
    headers: { authorization: `Bearer ${owner.token}` },
  });

describe('GET /api/downloads', () => {
  it('redirects a valid link to one that saves the file under the given name', async () => {
    const res = await downloads({ url: link, name: 'Main street – house.png' });
    expect(res.status).toBe(302);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const target = new URL(res.headers.get('location') as string, server.baseUrl);
    const file = await fetch(target);
    expect(file.status).toBe(200);
    const disposition = file.headers.get('content-disposition') ?? '';
    expect(disposition).toMatch(/^attachment/);
    expect(decodeURIComponent(disposition)).toContain('Main street – house.png');
    expect(Buffer.from(await file.arrayBuffer()).subarray(1, 4).toString()).toBe('PNG');
  });

  it('refuses a link it did not hand out, or one whose signature was changed', async () => {
    // the signature's first character changed (sig= on disk, X-Amz-Signature= on S3)
    const tampered = link.replace(/(sig=|Signature=)(.)/, (_, key: string, c: string) => key + (c === 'A' ? 'B' : 'A'));
    expect(tampered).not.toBe(link);
    for (const url of [tampered, 'https://example.com/renders/x.png', '/api/files/renders/other.png?expires=1&sig=00']) {
      const res = await downloads({ url, name: 'x.png' });
      expect(res.status).toBe(403);
      expect(((await res.json()) as { code?: string }).code).toBe('LINK_INVALID');
    }
  });

  it('answers 400, not a 431 or a 5xx, for a link that is too long or not printable ASCII, and for a missing name', async () => {
    for (const query of [{ url: `${link}&${'x'.repeat(3072)}`, name: 'x.png' }, { url: `${link}é`, name: 'x.png' }, { url: link }]) {
      const res = await downloads(query as Record<string, string>);
      expect(res.status).toBe(400);
    }
    // the longest link the document allows, in unicode-free worst-case encoding, still reaches the route
    const res = await downloads({ url: '%'.repeat(3072), name: '€'.repeat(255) });
    expect(res.status).toBe(403);
  });
});
