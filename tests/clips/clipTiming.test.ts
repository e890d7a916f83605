/**
 * GET /api/video-generation/timing (issue 41): who makes clips on this server and how long one typically takes, so
 * Generate Clip says the spec's 7 to 15 minutes for a hosted provider and the local provider's own time otherwise.
 */
import { createApp } from '../../api/app';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import { createTestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';

let local: TestServer;
let hosted: TestServer;

beforeAll(async () => {
  local = await serve(createApp({ config: { ...loadConfig(), providerKind: 'local' }, knex: testKnex(), logger }));
  hosted = await serve(createApp({ config: { ...loadConfig(), providerKind: 'fal' }, knex: testKnex(), logger }));
});

afterAll(async () => {
  await local?.close();
  await hosted?.close();
  await closeTestKnex();
});

describe('GET /api/video-generation/timing', () => {
  it('answers the local provider’s own time when this server makes the clips', async () => {
    const user = await createTestUser(local.baseUrl);
    const res = await request(local.baseUrl, '/api/video-generation/timing', { token: user.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: { maker: 'local', typicalSeconds: { min: 10, max: 60 } } });
  });

  it('answers the spec’s 7 to 15 minutes with a hosted provider', async () => {
    const user = await createTestUser(hosted.baseUrl);
    const res = await request(hosted.baseUrl, '/api/video-generation/timing', { token: user.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: { maker: 'hosted', typicalSeconds: { min: 420, max: 900 } } });
  });

  it('needs a session', async () => {
    const res = await request(local.baseUrl, '/api/video-generation/timing');
    expect(res.status).toBe(401);
  });
});
