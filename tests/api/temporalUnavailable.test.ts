/**
 * A Temporal that cannot be reached (restarting, a network blip) is a 503 TEMPORAL_UNAVAILABLE with Retry-After, not a
 * 500: the soak's chaos mode restarts the Temporal dev server while users start jobs (issue 28, item 3).
 */
import { Client, Connection } from '@temporalio/client';
import { isTemporalUnavailable } from '../../services/platform/temporalClient';
import { closedPort, request } from '../support/http';
import { createProject, newUser, pngBytes, startProjectsApp, uploadForm, type ProjectsTestApp } from '../projects/fixtures';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const services = require('../../scripts/lib/services') as {
  freePort(): Promise<number>;
  startTemporalDevServer(opts: { cli: string; port: number; uiPort?: number }): Promise<{ address: string; stop(): Promise<void> }>;
};

describe('Temporal unreachable', () => {
  let app: ProjectsTestApp;

  beforeAll(async () => {
    app = await startProjectsApp({ temporalAddress: `127.0.0.1:${await closedPort()}` });
  });

  afterAll(async () => {
    await app.server.close();
  });

  it('answers an image edit start with 503 TEMPORAL_UNAVAILABLE and Retry-After, not a 500', async () => {
    const user = await newUser(app.server.baseUrl);
    const project = await createProject(app.server.baseUrl, user);
    const upload = await request<{ render: { data: { id: string } } }>(app.server.baseUrl, '/api/upload/renders', {
      token: user.token,
      body: uploadForm({ bytes: await pngBytes(320, 180), fileName: 'hall.png', type: 'image/png' }, { projectId: project.id }),
    });
    expect(upload.status).toBe(200);
    const res = await request(app.server.baseUrl, '/api/ai-image-simple', {
      token: user.token,
      json: { context: { projectId: project.id }, parameters: { prompt: 'warm dusk light', baseImage: upload.body.render.data.id } },
    });
    expect({ status: res.status, body: res.body }).toEqual({
      status: 503,
      body: { success: false, error: 'Jobs cannot be started or read right now; please try again shortly', code: 'TEMPORAL_UNAVAILABLE' },
    });
    expect(res.headers.get('retry-after')).toBe('5');
  }, 60_000);

  it('tells a lost connection (the server stopped after the client connected) from a refusal by a live server', async () => {
    const port = await services.freePort();
    const server = await services.startTemporalDevServer({ cli: process.env.TEMPORAL_CLI_PATH as string, port, uiPort: 0 });
    const connection = await Connection.connect({ address: server.address });
    try {
      const client = new Client({ connection });
      // a live server refusing: the run does not exist
      const missing = await client.workflow.getHandle('no-such-run').describe().catch((err: unknown) => err);
      expect(missing).toBeInstanceOf(Error);
      expect(isTemporalUnavailable(missing)).toBe(false);
      expect(isTemporalUnavailable(new Error('boom'))).toBe(false);
      await server.stop();
      const lost = await client.workflow.start('imageEditWorkflow', { taskQueue: 'nowhere', workflowId: 'lost-connection', args: [] }).catch((err: unknown) => err);
      expect(lost).toBeInstanceOf(Error);
      expect(isTemporalUnavailable(lost)).toBe(true);
    } finally {
      await connection.close();
      await server.stop();
    }
  }, 120_000);
});
