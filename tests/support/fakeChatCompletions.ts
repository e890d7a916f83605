/**
 * A local HTTP server speaking the OpenAI chat-completions protocol, for the hosted chat provider's tests:
 *   POST /v1/chat/completions  { model, messages: [{ role, content }], response_format: { type: 'json_object' } }
 *     -> 200 { id, object: 'chat.completion', created, model, choices: [{ index, message: { role: 'assistant', content }, finish_reason }], usage }
 *     -> 401 { error: { message, type: 'invalid_request_error', code: 'invalid_api_key' } } without `Authorization: Bearer <apiKey>`
 *     -> 400 { error } when the body is not a chat request
 * The "model" answers what the test scripts (a function of the request), or fails the way the test asks.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ChatCompletionRequest {
  model: string;
  messages: Array<{ role: string; content: string }>;
  response_format?: { type: string };
  temperature?: number;
}

export type FakeChatBehaviour = 'answer' | 'server-error' | 'not-json' | 'rate-limited';

export interface FakeChatCompletions {
  baseUrl: string;
  apiKey: string;
  requests: ChatCompletionRequest[];
  behaviour: FakeChatBehaviour;
  /** What the model's message content is for a request (a JSON text unless the test wants otherwise). */
  answer: (request: ChatCompletionRequest) => string;
  close(): Promise<void>;
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

export async function startFakeChatCompletions(answer: (request: ChatCompletionRequest) => string, apiKey = `sk-test-${randomUUID()}`): Promise<FakeChatCompletions> {
  const fake = { apiKey, requests: [] as ChatCompletionRequest[], behaviour: 'answer' as FakeChatBehaviour, answer } as FakeChatCompletions;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return send(res, 404, { error: { message: `Unknown path ${req.url}`, type: 'invalid_request_error' } });
      if (req.headers.authorization !== `Bearer ${fake.apiKey}`) {
        return send(res, 401, { error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' } });
      }
      let body: ChatCompletionRequest;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatCompletionRequest;
      } catch {
        return send(res, 400, { error: { message: 'We could not parse the JSON body of your request.', type: 'invalid_request_error' } });
      }
      if (typeof body.model !== 'string' || !Array.isArray(body.messages) || body.messages.length === 0) {
        return send(res, 400, { error: { message: "'messages' is a required property", type: 'invalid_request_error' } });
      }
      fake.requests.push(body);
      if (fake.behaviour === 'server-error') return send(res, 500, { error: { message: 'The server had an error while processing your request.', type: 'server_error' } });
      if (fake.behaviour === 'rate-limited') return send(res, 429, { error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } });
      const content = fake.behaviour === 'not-json' ? 'Sure! Here is your edit: fades.' : fake.answer(body);
      send(res, 200, {
        id: `chatcmpl-${randomUUID()}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [{ index: 0, message: { role: 'assistant', content }, logprobs: null, finish_reason: 'stop' }],
        usage: { prompt_tokens: 100, completion_tokens: 50, total_tokens: 150 },
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  fake.baseUrl = `http://127.0.0.1:${port}`;
  fake.close = () =>
    new Promise((resolve, reject) => {
      server.closeAllConnections();
      server.close((err) => (err ? reject(err) : resolve()));
    });
  return fake;
}
