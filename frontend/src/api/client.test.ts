import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ApiReplyError, apiErrorMessage, createApiClient, isApiHttpError, unreadableReplyMessage } from './client';
import { inviteTokenFromSearch, workspaceFromSearch } from './workspaceAddress';

/** Replies by path: status, content type and body exactly as a server (or a proxy in front of it) might send them. */
const REPLIES: Record<string, { status: number; type?: string; body: string }> = {
  '/api/ok': { status: 200, type: 'application/json', body: '{"success":true,"value":42}' },
  '/api/ok-empty': { status: 200, type: 'application/json', body: '' },
  '/api/ok-html': { status: 200, type: 'text/html', body: '<html><body><h1>Maintenance</h1></body></html>' },
  '/api/no-content': { status: 204, body: '' },
  '/api/api-error': { status: 409, type: 'application/json', body: '{"success":false,"error":"Project name taken","code":"CONFLICT"}' },
  '/api/empty-error': { status: 502, body: '' },
  '/api/proxy-page': {
    status: 502,
    type: 'text/html',
    body: '<html><head><title>502 Bad Gateway</title><style>body{color:red}</style></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>',
  },
  '/api/json-without-error': { status: 500, type: 'application/json', body: '{"success":false}' },
};

let server: http.Server;
let prefix: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (req.url === '/api/echo-workspace') {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ workspace: req.headers['x-workspace-id'] ?? null }));
      return;
    }
    const reply = REPLIES[req.url ?? ''] ?? { status: 404, type: 'application/json', body: '{"success":false,"error":"Not found"}' };
    res.statusCode = reply.status;
    if (reply.type) res.setHeader('content-type', reply.type);
    res.end(reply.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  prefix = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

async function failure(path: string): Promise<unknown> {
  try {
    await createApiClient(prefix).get(path, { retry: 0 }).json();
  } catch (error) {
    return error;
  }
  throw new Error(`${path} did not fail`);
}

describe('API client', () => {
  it('reads JSON replies, and 204 as no content', async () => {
    const api = createApiClient(prefix);
    expect(await api.get('ok').json()).toEqual({ success: true, value: 42 });
    expect((await api.delete('no-content')).status).toBe(204);
  });

  it("shows the API's own error text and code", async () => {
    const error = await failure('api-error');
    expect(isApiHttpError(error)).toBe(true);
    expect(error).toMatchObject({ status: 409, apiMessage: 'Project name taken', code: 'CONFLICT', message: 'Project name taken' });
  });

  it("says 'Server returned empty response with status <n>' for an empty reply, failed or not", async () => {
    const failed = await failure('empty-error');
    expect(isApiHttpError(failed)).toBe(true);
    expect(apiErrorMessage(failed, 'fallback')).toBe('Server returned empty response with status 502');

    const succeeded = await failure('ok-empty');
    expect(succeeded).toBeInstanceOf(ApiReplyError);
    expect(apiErrorMessage(succeeded, 'fallback')).toBe('Server returned empty response with status 200');
  });

  it("says 'Server error (<status>): <text>. Failed to parse JSON response.' for a reply that is not JSON", async () => {
    const proxy = await failure('proxy-page');
    expect(apiErrorMessage(proxy, 'fallback')).toBe('Server error (502): 502 Bad Gateway 502 Bad Gateway nginx. Failed to parse JSON response.');
    const page = await failure('ok-html');
    expect(page).toBeInstanceOf(ApiReplyError);
    expect(apiErrorMessage(page, 'fallback')).toBe('Server error (200): Maintenance. Failed to parse JSON response.');
  });

  it('keeps the status text for JSON failures without an error field, and the fallback for network failures', async () => {
    const bare = await failure('json-without-error');
    expect(apiErrorMessage(bare, 'fallback')).toBe('Internal Server Error');
    const closed = createApiClient('http://127.0.0.1:1/api');
    let network: unknown;
    try {
      await closed.get('ok', { retry: 0 }).json();
    } catch (error) {
      network = error;
    }
    expect(apiErrorMessage(network, 'Failed to load projects')).toBe('Failed to load projects');
  });

  it('names the current workspace on every call, and none for the personal workspace', async () => {
    let current: string | null = null;
    const api = createApiClient(prefix, () => current);
    expect(await api.get('echo-workspace').json()).toEqual({ workspace: null });
    current = '5b0f3c1e-2a44-4c1b-9d7e-0c6f7a1b2c3d';
    expect(await api.get('echo-workspace').json()).toEqual({ workspace: current });
    // read per call: a switch applies to the next request at once
    current = null;
    expect(await api.post('echo-workspace').json()).toEqual({ workspace: null });
  });

  it('quotes at most 200 characters of an unreadable reply', () => {
    const message = unreadableReplyMessage(500, 'x'.repeat(1000));
    expect(message).toBe(`Server error (500): ${'x'.repeat(200)}…. Failed to parse JSON response.`);
    expect(unreadableReplyMessage(503, '<html></html>', 'Service Unavailable')).toBe('Server error (503): Service Unavailable. Failed to parse JSON response.');
  });
});

describe('workspace in the address', () => {
  it('reads ?workspace=<id>, absent or malformed meaning the personal workspace', () => {
    expect(workspaceFromSearch('?workspace=5B0F3C1E-2A44-4C1B-9D7E-0C6F7A1B2C3D&view=approvals')).toBe('5b0f3c1e-2a44-4c1b-9d7e-0c6f7a1b2c3d');
    expect(workspaceFromSearch('?view=approvals')).toBeNull();
    expect(workspaceFromSearch('?workspace=../admin')).toBeNull();
  });

  it('reads the invitation token only on the invitation page', () => {
    expect(inviteTokenFromSearch('?view=invite&token=abcdefghijklmnopqrstuvwxyz_-0123456789ABCDEFG')).toBe('abcdefghijklmnopqrstuvwxyz_-0123456789ABCDEFG');
    expect(inviteTokenFromSearch('?token=abcdefghijklmnopqrstuvwxyz')).toBeNull();
    expect(inviteTokenFromSearch('?view=invite&token=<script>')).toBeNull();
    expect(inviteTokenFromSearch('?view=invite')).toBeNull();
  });
});
