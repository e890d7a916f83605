/**
 * docs/webhooks.md says how things are: every payload example parses against its type's schema in the OpenAPI
 * document (api/openapi/webhooks.ts) with exactly the fields the schema names, and the receiver example, run as it is
 * written in Node, accepts a request signed the way deliveries are (services/integrations/webhookSigning.ts) and
 * refuses one signed with another secret or tampered with.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { WEBHOOK_PAYLOAD_SCHEMAS } from '../../api/openapi/webhooks';
import { WEBHOOK_EVENT_TYPES, type AnyWebhookEventType } from '../../domain/webhooks';
import { newWebhookSecret, signWebhook } from '../../services/integrations/webhookSigning';
import { closedPort } from '../support/http';

const ROOT = path.resolve(__dirname, '../..');
const DOC = path.join(ROOT, 'docs/webhooks.md');

async function codeBlocks(language: string): Promise<string[]> {
  const text = await fs.readFile(DOC, 'utf8');
  return [...text.matchAll(new RegExp('```' + language + '\\n([\\s\\S]*?)\\n```', 'g'))].map((m) => m[1]);
}

describe('docs/webhooks.md', () => {
  it('every payload example parses against its schema, with exactly its fields, and each family of types has one', async () => {
    const examples = (await codeBlocks('json')).map((block) => JSON.parse(block) as { type: string; data: Record<string, unknown> });
    const typed = examples.filter((e) => e.type in WEBHOOK_PAYLOAD_SCHEMAS);
    for (const example of typed) {
      const schema = WEBHOOK_PAYLOAD_SCHEMAS[example.type as AnyWebhookEventType];
      const parsed = schema.safeParse(example);
      if (!parsed.success) throw new Error(`the ${example.type} example does not parse: ${parsed.error.message}`);
      expect(Object.keys(example.data).sort()).toEqual(Object.keys(schema.shape.data.shape).sort());
    }
    const families = new Set(typed.map((e) => e.type.split('.')[0]));
    expect([...families].sort()).toEqual([...new Set([...WEBHOOK_EVENT_TYPES, 'webhook.test'].map((t) => t.split('.')[0]))].sort());
  });

  describe('the receiver example', () => {
    let child: ChildProcess;
    let dir: string;
    let baseUrl: string;
    let output = '';
    const secret = newWebhookSecret();

    beforeAll(async () => {
      const [receiver] = await codeBlocks('js');
      expect(receiver).toContain("require('standardwebhooks')");
      const port = await closedPort();
      dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rs-webhook-receiver-'));
      const file = path.join(dir, 'receiver.js');
      // the example as written, on a free port
      await fs.writeFile(file, receiver.replace('.listen(8787)', `.listen(${port}, '127.0.0.1', () => console.log('listening'))`));
      child = spawn(process.execPath, [file], { env: { ...process.env, RENDER_STUDIO_WEBHOOK_SECRET: secret, NODE_PATH: path.join(ROOT, 'node_modules') }, stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      const deadline = Date.now() + 20_000;
      while (!output.includes('listening')) {
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the receiver did not start: ${output}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      baseUrl = `http://127.0.0.1:${port}`;
    });

    afterAll(async () => {
      if (child && child.exitCode === null) {
        // 'close': the process ended and its output pipes are closed
        const exited = new Promise((resolve) => child.once('close', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      if (dir) await fs.rm(dir, { recursive: true, force: true });
    });

    function send(body: string, headers: Record<string, string>): Promise<Response> {
      // no kept-alive connection outlives the test
      return fetch(baseUrl, { method: 'POST', headers: { 'content-type': 'application/json', connection: 'close', ...headers }, body });
    }

    it('accepts a signed delivery (also one signed with two secrets during a rotation) and refuses other secrets and changed bodies', async () => {
      const body = JSON.stringify({ type: 'webhook.test', version: 1, timestamp: new Date().toISOString(), data: { workspaceId: 'w', endpointId: 'e', message: 'hello receiver' } });
      const signed = signWebhook({ secrets: [secret], messageId: 'msg_docs_1', at: new Date(), body });
      expect((await send(body, { ...signed })).status).toBe(204);
      const rotated = signWebhook({ secrets: [newWebhookSecret(), secret], messageId: 'msg_docs_2', at: new Date(), body });
      expect((await send(body, { ...rotated })).status).toBe(204);
      const other = signWebhook({ secrets: [newWebhookSecret()], messageId: 'msg_docs_3', at: new Date(), body });
      expect((await send(body, { ...other })).status).toBe(400);
      expect((await send(body.replace('hello', 'hullo'), { ...signed })).status).toBe(400);
      const stale = signWebhook({ secrets: [secret], messageId: 'msg_docs_4', at: new Date(Date.now() - 10 * 60 * 1000), body });
      expect((await send(body, { ...stale })).status).toBe(400);
      // the same webhook-id again is acknowledged, not handled twice
      expect((await send(body, { ...signed })).status).toBe(204);
      expect(output.match(/webhook\.test/g)).toHaveLength(2);
    });
  });
});
