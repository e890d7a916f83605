/**
 * Issue 44, acceptance 5 (formats): both chat providers understand "also make a square one" and its kin. The rule-based
 * one reads the formats by ratio, by where the video is posted, or by shape with a word that makes it a version of the
 * video, over the formats rendered now, and says the change in words; the OpenAI-compatible one sends the formats now
 * as context and keeps only known formats of the model's answer. Through the API the project's formats follow the
 * chat and the Formats picker (`PUT /api/projects/{id}/aesthetic/formats`), and bad input stores nothing.
 */
import { createApp } from '../../api/app';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import type { AestheticChatAnswer } from '../../domain/assembly';
import { understandFormats } from '../../providers/local/chatFormats';
import { RuleBasedChatProvider } from '../../providers/local/chat';
import { OpenAiChatProvider } from '../../providers/openai/chat';
import { closeTemporalClient } from '../../services/platform/temporalClient';
import { createTestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { startFakeChatCompletions, type FakeChatCompletions } from '../support/fakeChatCompletions';
import { request, serve } from '../support/http';

describe('the rule-based chat and the formats', () => {
  it('"also make a square one" adds 1:1 to the platform\'s own format and says so', async () => {
    const reply = await new RuleBasedChatProvider().reply({ message: 'Also make a square one', history: [], selectedClipCount: 2, formats: ['9:16'], ownFormat: '9:16' });
    expect(reply.editing?.formats).toEqual(['9:16', '1:1']);
    expect(reply.reply).toMatch(/^Also made in Square \(1:1\)\. Each of the 2 formats \(9:16, 1:1\) is its own video in Approvals\./);
    // the formats not known yet: the selection's platform format stands for them
    expect(understandFormats('a square version too please', [], '16:9').formats).toEqual(['1:1', '16:9']);
  });

  it('names a format by its ratio, by where it is posted, or by its shape with a version word', () => {
    expect(understandFormats('and a 4:5 cut', ['9:16'], '9:16').formats).toEqual(['9:16', '4:5']);
    expect(understandFormats('make one for YouTube as well', ['9:16'], '9:16').formats).toEqual(['9:16', '16:9']);
    expect(understandFormats('we need a landscape version and a 1x1 one', ['9:16'], '9:16')).toEqual({
      formats: ['9:16', '1:1', '16:9'],
      words: 'Also made in Square (1:1) and YouTube (16:9). Each of the 3 formats (9:16, 1:1, 16:9) is its own video in Approvals.',
    });
    // a square in the render, a vertical wipe, a wide shot: no format
    expect(understandFormats('open on the square in front of the tower', ['9:16'], '9:16')).toEqual({});
    expect(understandFormats('use a vertical wipe between clips', ['9:16'], '9:16')).toEqual({});
    expect(understandFormats('start with the wide shot', ['9:16'], '9:16')).toEqual({});
  });

  it('drops a format, keeps only the named ones, and never drops the last', () => {
    expect(understandFormats('drop the square one', ['9:16', '1:1'], '9:16')).toEqual({ formats: ['9:16'], words: 'No Square (1:1) any more. One video, in Reels (9:16).' });
    expect(understandFormats('only the vertical one', ['9:16', '1:1', '16:9'], '9:16').formats).toEqual(['9:16']);
    expect(understandFormats('no 9:16 version', ['9:16'], '9:16')).toEqual({ formats: ['9:16'], words: 'I kept Reels (9:16): a video needs at least one format.' });
    expect(understandFormats('a 1:1 one', ['9:16', '1:1'], '9:16').words).toBe('The videos are made in Reels (9:16) and Square (1:1), as before.');
  });
});

describe('the OpenAI-compatible chat and the formats', () => {
  let fake: FakeChatCompletions;
  let formats: unknown;

  beforeAll(async () => {
    fake = await startFakeChatCompletions(() =>
      JSON.stringify({
        reply: 'Also made in Square (1:1): each format is its own video in Approvals.',
        preferences: { aesthetic: 'luxury', energy_level: 'calm', copy_style: 'no text', generated_texts: [] },
        editing: { transition: 'fade', pacing: 'calm', formats },
        analysis: { ready_to_create: true, confidence_score: 0.9, missing_info: [] },
      }),
    );
  });
  afterAll(() => fake.close());

  const provider = () => new OpenAiChatProvider({ baseUrl: `${fake.baseUrl}/v1`, apiKey: fake.apiKey, model: 'gpt-test' });

  it('sends the formats now, and keeps only known formats of the answer, in the picker\'s order', async () => {
    formats = ['1:1', '9:16', '1:1'];
    const reply = await provider().reply({ message: 'also make a square one', history: [], selectedClipCount: 1, formats: [], ownFormat: '9:16' });
    expect(fake.requests.at(-1)?.messages.at(-1)?.content).toContain('"current_formats":["9:16"]');
    expect(fake.requests.at(-1)?.messages[0].content).toContain('"formats"');
    expect(reply.editing?.formats).toEqual(['9:16', '1:1']);
    for (const wrong of [['2:3'], [], 'square', null]) {
      formats = wrong;
      expect((await provider().reply({ message: 'a square one', history: [], selectedClipCount: 1, formats: ['9:16'] })).editing?.formats).toBeUndefined();
    }
  });

  it("through the API the project's formats follow the model", async () => {
    const server = await serve(createApp({ config: loadConfig(), knex: testKnex(), logger, chat: provider() }));
    try {
      const user = await createTestUser(server.baseUrl);
      const project = await request<{ project: { id: string } }>(server.baseUrl, '/api/projects', { token: user.token, json: { name: 'Harbour Villas' } });
      formats = ['16:9', '4:5'];
      const res = await request<AestheticChatAnswer>(server.baseUrl, `/api/projects/${project.body.project.id}/aesthetic`, { token: user.token, json: { message: 'a feed version and a YouTube one' } });
      expect(res.status).toBe(200);
      expect(res.body.editing_config.formats).toEqual(['4:5', '16:9']);
    } finally {
      await server.close();
    }
  });
});

describe('the project\'s formats through the API', () => {
  it('the picker sets them, the rule-based chat adds to them, and bad input is refused with nothing stored', async () => {
    const server = await serve(createApp({ config: loadConfig(), knex: testKnex(), logger, chat: new RuleBasedChatProvider() }));
    try {
      const user = await createTestUser(server.baseUrl);
      const project = await request<{ project: { id: string } }>(server.baseUrl, '/api/projects', { token: user.token, json: { name: 'Harbour Villas' } });
      const base = `/api/projects/${project.body.project.id}/aesthetic`;
      const fresh = await request<AestheticChatAnswer>(server.baseUrl, base, { token: user.token });
      expect(fresh.body.editing_config.formats).toBeNull();

      const picked = await request<AestheticChatAnswer>(server.baseUrl, `${base}/formats`, { method: 'PUT', token: user.token, json: { formats: ['9:16'] } });
      expect(picked.status).toBe(200);
      expect(picked.body.editing_config.formats).toEqual(['9:16']);

      const refusals: Array<[object, string]> = [
        [{ formats: [] }, 'formats must be one or more of 9:16, 1:1, 4:5 and 16:9'],
        [{ formats: ['2:3'] }, 'formats must be one or more of 9:16, 1:1, 4:5 and 16:9'],
        [{ formats: 'square' }, 'formats must be one or more of 9:16, 1:1, 4:5 and 16:9'],
        [{}, 'formats must be one or more of 9:16, 1:1, 4:5 and 16:9'],
        [{ formats: ['9:16', '9:16'] }, 'formats must not name a format twice'],
        [{ formats: ['1:1'], extra: true }, 'Unknown field(s): extra'],
      ];
      for (const [body, error] of refusals) {
        const bad = await request<{ error: string }>(server.baseUrl, `${base}/formats`, { method: 'PUT', token: user.token, json: body });
        expect([bad.status, bad.body.error]).toEqual([400, error]);
      }
      expect((await request<AestheticChatAnswer>(server.baseUrl, base, { token: user.token })).body.editing_config.formats).toEqual(['9:16']);

      const chat = await request<AestheticChatAnswer>(server.baseUrl, base, { token: user.token, json: { message: 'also make a square one' } });
      expect(chat.status).toBe(200);
      expect(chat.body.editing_config.formats).toEqual(['9:16', '1:1']);
      expect(chat.body.chat_history.at(-1)?.content).toMatch(/^Also made in Square \(1:1\)\./);

      const reset = await request<AestheticChatAnswer>(server.baseUrl, `${base}/formats`, { method: 'PUT', token: user.token, json: { formats: null } });
      expect(reset.body.editing_config.formats).toBeNull();
    } finally {
      await server.close();
      await closeTemporalClient();
      await closeTestKnex();
    }
  });
});
