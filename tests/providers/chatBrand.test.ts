/**
 * Issue 44, acceptance 5 (brand parts): both chat providers understand the title card, the logo, the end card and
 * captions in the brand's style. The rule-based one reads "add our logo bottom right", "end card with the phone
 * number", a quoted title and the like against the assembly's parts and the workspace's kit, and says each change in
 * words (and what the kit still lacks); the OpenAI-compatible one sends the kit and the parts as context and keeps only
 * the model's known keys. Through the API with either provider the project's brand parts follow.
 */
import { createApp } from '../../api/app';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import type { AestheticChatAnswer } from '../../domain/assembly';
import { DEFAULT_BRAND_PARTS } from '../../domain/brandVideo';
import type { ChatBrandKit } from '../../providers';
import { understandBrand } from '../../providers/local/chatBrand';
import { RuleBasedChatProvider } from '../../providers/local/chat';
import { OpenAiChatProvider } from '../../providers/openai/chat';
import { closeTemporalClient } from '../../services/platform/temporalClient';
import { createTestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { startFakeChatCompletions, type FakeChatCompletions } from '../support/fakeChatCompletions';
import { request, serve } from '../support/http';

const kit: ChatBrandKit = { hasLogo: true, company: 'Harbour Estates', phone: '+44 20 7946 0000', website: 'harbour.example', callToAction: 'Book a viewing' };

describe('the rule-based chat and the brand parts', () => {
  const chat = new RuleBasedChatProvider();

  it('"add our logo bottom right" puts the logo in that corner and says so; "bottom" is not a caption position', async () => {
    const reply = await chat.reply({ message: 'Add our logo bottom right', history: [], selectedClipCount: 2, brandKit: kit, brand: { ...DEFAULT_BRAND_PARTS, logo: false } });
    expect(reply.editing?.brand).toEqual({ logo: true, logo_corner: 'bottom-right' });
    expect(reply.reply).toMatch(/^Logo bottom right, 14% of the frame, at 85% opacity\./);
    expect(reply.editing?.caption_position).toBeUndefined();
  });

  it('"end card with the phone number" turns the end card on with the kit\'s lines, and says what the kit lacks', () => {
    expect(understandBrand('End card with the phone number', { ...DEFAULT_BRAND_PARTS, end_card: false }, kit)).toEqual({
      brand: { end_card: true },
      words: 'End card for 3 s with "Book a viewing" and Harbour Estates, +44 20 7946 0000, harbour.example.',
    });
    expect(understandBrand('end card with the phone number', DEFAULT_BRAND_PARTS, { ...kit, phone: '' }).words).toBe(
      'End card for 3 s with "Book a viewing" and Harbour Estates, harbour.example. The brand kit has no phone number yet: add it on the Brand kit page.',
    );
    expect(understandBrand('no end card please', DEFAULT_BRAND_PARTS, kit)).toEqual({ brand: { end_card: false }, words: 'No end card.' });
    expect(understandBrand('a 5 second end card', DEFAULT_BRAND_PARTS, kit).brand).toEqual({ end_card: true, end_card_seconds: 5 });
  });

  it('reads the title: its quoted words with their case, over the first clip or on a card, its length; a quoted "Luxury" is no look', async () => {
    const reply = await chat.reply({ message: 'Title "Luxury Living at Harbour" over the first clip for 2 seconds', history: [], selectedClipCount: 1, brandKit: kit, brand: DEFAULT_BRAND_PARTS });
    expect(reply.editing?.brand).toEqual({ title_card: true, title_text: 'Luxury Living at Harbour', title_style: 'overlay', title_seconds: 2 });
    expect(reply.reply).toMatch(/^Title card "Luxury Living at Harbour" over the first clip for 2 s\./);
    expect(reply.preferences.aesthetic).toBeUndefined();
    expect(understandBrand('no title card', DEFAULT_BRAND_PARTS, kit)).toEqual({ brand: { title_card: false }, words: 'No title card.' });
    expect(understandBrand('put the title on a brand-coloured card', { ...DEFAULT_BRAND_PARTS, title_style: 'overlay' }, kit).brand).toEqual({ title_card: true, title_style: 'card' });
    // out of range: kept to 1.5-3 s
    expect(understandBrand('title for 10 seconds', DEFAULT_BRAND_PARTS, kit).brand).toMatchObject({ title_seconds: 3 });
  });

  it('sizes and fades the logo within its limits, takes it off, and styles the captions', () => {
    const now = { ...DEFAULT_BRAND_PARTS, logo_size: 0.28, logo_opacity: 0.3 };
    expect(understandBrand('a bigger logo', now, kit).brand).toEqual({ logo: true, logo_size: 0.3 });
    expect(understandBrand('make the logo fainter', now, kit).brand).toEqual({ logo: true, logo_opacity: 0.2 });
    expect(understandBrand('logo at 50%', now, kit).brand).toEqual({ logo: true, logo_opacity: 0.5 });
    expect(understandBrand('remove the logo', now, kit)).toEqual({ brand: { logo: false }, words: 'Logo off.' });
    expect(understandBrand('captions in our brand colours', now, kit)).toEqual({ brand: { captions: true }, words: "Captions in the brand's font and colour." });
    expect(understandBrand('plain white captions', now, kit)).toEqual({ brand: { captions: false }, words: 'Captions in plain white.' });
    // a message about something else changes no part
    expect(understandBrand('slow fades between the clips, calm pace', now, kit)).toEqual({});
  });

  it('without a kit (or its logo) the change is kept and the reply points to the Brand kit page', () => {
    expect(understandBrand('add our logo top left', DEFAULT_BRAND_PARTS, null)).toEqual({
      brand: { logo: true, logo_corner: 'top-left' },
      words: 'Logo top left, 14% of the frame, at 85% opacity. This workspace has no brand kit yet: an admin can set one up on the Brand kit page, and these parts show once it exists.',
    });
    expect(understandBrand('add our logo', DEFAULT_BRAND_PARTS, { ...kit, hasLogo: false }).words).toMatch(/ The brand kit has no logo yet: add it on the Brand kit page\.$/);
  });
});

describe('the OpenAI-compatible chat and the brand parts', () => {
  let fake: FakeChatCompletions;
  let brand: unknown;

  beforeAll(async () => {
    fake = await startFakeChatCompletions(() =>
      JSON.stringify({
        reply: 'Logo bottom right, and an end card with your phone number.',
        preferences: { aesthetic: 'luxury', energy_level: 'calm', copy_style: 'no text', generated_texts: [] },
        editing: { transition: 'fade', pacing: 'calm', brand },
        analysis: { ready_to_create: true, confidence_score: 0.9, missing_info: [] },
      }),
    );
  });
  afterAll(() => fake.close());

  const provider = () => new OpenAiChatProvider({ baseUrl: `${fake.baseUrl}/v1`, apiKey: fake.apiKey, model: 'gpt-test' });

  it("sends the kit and the parts now, and keeps only the model's known keys of the right type", async () => {
    brand = { logo: true, logo_corner: 'bottom-right', end_card: true, logo_size: 'big', logo_corner_x: 3, title_style: 'spinning' };
    const reply = await provider().reply({ message: 'add our logo bottom right and an end card with the phone number', history: [], selectedClipCount: 1, brandKit: kit, brand: DEFAULT_BRAND_PARTS });
    const context = fake.requests.at(-1)?.messages.at(-1)?.content ?? '';
    expect(context).toContain('"brand_kit":{"has_logo":true,"company":"Harbour Estates","phone":"+44 20 7946 0000"');
    expect(context).toContain('"current_brand":{"title_card":true');
    expect(fake.requests.at(-1)?.messages[0].content).toContain('"brand"');
    expect(reply.editing?.brand).toEqual({ logo: true, logo_corner: 'bottom-right', end_card: true });
    brand = 'everything';
    expect((await provider().reply({ message: 'brand it', history: [], selectedClipCount: 1, brandKit: null })).editing?.brand).toBeUndefined();
  });

  it("through the API the project's brand parts follow the model, clamped to their limits, and the reply is its words", async () => {
    const server = await serve(createApp({ config: loadConfig(), knex: testKnex(), logger, chat: provider() }));
    try {
      const user = await createTestUser(server.baseUrl);
      const project = await request<{ project: { id: string } }>(server.baseUrl, '/api/projects', { token: user.token, json: { name: 'Harbour Villas' } });
      brand = { logo: true, logo_corner: 'bottom-left', logo_size: 0.9, end_card: false };
      const res = await request<AestheticChatAnswer>(server.baseUrl, `/api/projects/${project.body.project.id}/aesthetic`, { token: user.token, json: { message: 'logo bottom left, much bigger, no end card' } });
      expect(res.status).toBe(200);
      expect(res.body.editing_config.brand).toEqual({ ...DEFAULT_BRAND_PARTS, logo: true, logo_corner: 'bottom-left', logo_size: 0.3, end_card: false });
      expect(res.body.chat_history.at(-1)?.content).toBe('Logo bottom right, and an end card with your phone number.');
      // the model's context names the workspace's kit: none saved yet
      expect(fake.requests.at(-1)?.messages.at(-1)?.content).toContain('"brand_kit":null');
    } finally {
      await server.close();
    }
  });

  it('through the API with the rule-based chat, "end card with the phone number" reads the saved kit', async () => {
    const server = await serve(createApp({ config: loadConfig(), knex: testKnex(), logger, chat: new RuleBasedChatProvider() }));
    try {
      const user = await createTestUser(server.baseUrl);
      const saved = await request(server.baseUrl, `/api/workspaces/${user.id}/brand-kit`, {
        method: 'PUT',
        token: user.token,
        json: { primaryColor: '#0000FF', secondaryColor: '#FF00FF', font: 'Lato', contact: { company: 'Harbour Estates', phone: '', website: 'harbour.example' }, callToAction: 'Book a viewing' },
      });
      expect(saved.status).toBe(200);
      const project = await request<{ project: { id: string } }>(server.baseUrl, '/api/projects', { token: user.token, json: { name: 'Harbour Villas' } });
      const path = `/api/projects/${project.body.project.id}/aesthetic`;
      const off = await request<AestheticChatAnswer>(server.baseUrl, path, { token: user.token, json: { message: 'no end card' } });
      expect(off.body.editing_config.brand.end_card).toBe(false);
      const res = await request<AestheticChatAnswer>(server.baseUrl, path, { token: user.token, json: { message: 'End card with the phone number' } });
      expect(res.status).toBe(200);
      expect(res.body.editing_config.brand).toEqual({ ...DEFAULT_BRAND_PARTS, end_card: true });
      expect(res.body.chat_history.at(-1)?.content).toMatch(/^End card for 3 s with "Book a viewing" and Harbour Estates, harbour\.example\. The brand kit has no phone number yet: add it on the Brand kit page\./);
    } finally {
      await server.close();
      await closeTemporalClient();
      await closeTestKnex();
    }
  });
});
