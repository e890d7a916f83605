import { createChatProvider, ProviderError, type ChatClipFacts } from '../../providers';
import { RuleBasedChatProvider } from '../../providers/local/chat';
import { OpenAiChatProvider } from '../../providers/openai/chat';
import { startFakeChatCompletions, type FakeChatCompletions } from '../support/fakeChatCompletions';

const clips: ChatClipFacts[] = [
  { id: 'c-walk', name: 'Lobby walk', project_name: 'Harbour View', camera_movement: 'Walk Through', duration: 5, orientation: 'landscape' },
  { id: 'c-night', name: 'Evening', project_name: 'Harbour View', camera_movement: 'Day to Night', duration: 5, orientation: 'landscape' },
  { id: 'c-drone', name: 'Aerial', project_name: 'Harbour View', camera_movement: 'Drone Shot', duration: 5, orientation: 'landscape' },
];

describe('RuleBasedChatProvider (local)', () => {
  const chat = new RuleBasedChatProvider();

  it('reads aesthetic, energy and copy style from the words and proposes the cut', async () => {
    const reply = await chat.reply({ message: 'Make it cinematic and energetic with professional captions', history: [], selectedClipCount: 3, clips });
    expect(reply.preferences).toMatchObject({ aesthetic: 'cinematic', energy_level: 'energetic', copy_style: 'professional' });
    expect(reply.editing).toEqual({ transition: 'dissolve', pacing: 'energetic', caption_position: 'bottom' });
    expect(reply.analysis).toEqual({ ready_to_create: true, confidence_score: 1, missing_info: [] });
    // establishing shot first, day to night last
    expect(reply.clip_order?.map((o) => o.clip_id)).toEqual(['c-drone', 'c-walk', 'c-night']);
    expect(reply.preferences.generated_texts).toHaveLength(3);
    expect(reply.preferences.generated_texts?.[0]).toBe('Introducing Harbour View');
    expect(reply.reply).toContain('Ready to create');
  });

  it('says what it still needs, one question at a time', async () => {
    const first = await chat.reply({ message: 'Hi, I want a video', history: [], selectedClipCount: 2, clips: clips.slice(0, 2) });
    expect(first.analysis).toEqual({ ready_to_create: false, confidence_score: 0.25, missing_info: ['aesthetic', 'energy_level', 'copy_style'] });
    expect(first.reply).toContain('What look are you after');
    const second = await chat.reply({ message: 'luxury please', history: [{ role: 'user', content: 'Hi, I want a video' }], selectedClipCount: 2, clips: clips.slice(0, 2) });
    expect(second.analysis.missing_info).toEqual(['energy_level', 'copy_style']);
    expect(second.reply).toContain('calm, balanced or energetic');
    const none = await chat.reply({ message: 'luxury, calm, playful', history: [], selectedClipCount: 0 });
    expect(none.analysis.missing_info).toEqual(['clips']);
  });

  it('keeps settled preferences, lets the latest message change them, and honours asked-for transitions and no text', async () => {
    const reply = await chat.reply({
      message: 'actually make it calm, with wipes and no text',
      history: [{ role: 'user', content: 'vibrant and energetic' }],
      selectedClipCount: 2,
      clips: clips.slice(0, 2),
      preferences: { aesthetic: 'vibrant', energy_level: 'energetic', copy_style: 'playful' },
    });
    expect(reply.preferences).toMatchObject({ aesthetic: 'vibrant', energy_level: 'calm', copy_style: 'no text', generated_texts: [] });
    expect(reply.editing).toMatchObject({ transition: 'wipeLeft', pacing: 'calm' });
  });

  it('is deterministic and refuses an empty message', async () => {
    const request = { message: 'warm and cosy, balanced, aspirational', history: [], selectedClipCount: 3, clips };
    expect(await chat.reply(request)).toEqual(await chat.reply(request));
    await expect(chat.reply({ message: '  ', history: [], selectedClipCount: 1 })).rejects.toThrow('Please type a message');
  });
});

describe('OpenAiChatProvider (against a local chat-completions server)', () => {
  let fake: FakeChatCompletions;
  const answer = {
    reply: 'A slow luxury cut with fades, opening on the aerial.',
    preferences: { aesthetic: 'luxury', energy_level: 'calm', copy_style: 'aspirational', generated_texts: ['Welcome home', 'Evenings to remember', 'Rise above'] },
    editing: { transition: 'fade', pacing: 'calm', caption_position: 'top' },
    clip_order: [
      { clip_id: 'c-drone', reason: 'establishes the place' },
      { clip_id: 'c-unknown', reason: 'not selected' },
      { clip_id: 'c-walk', reason: 'inside' },
    ],
    analysis: { ready_to_create: true, confidence_score: 0.9, missing_info: [] },
  };

  beforeAll(async () => {
    fake = await startFakeChatCompletions(() => JSON.stringify(answer));
  });
  afterAll(() => fake.close());
  beforeEach(() => {
    fake.behaviour = 'answer';
    fake.requests.length = 0;
  });

  const provider = () => new OpenAiChatProvider({ baseUrl: `${fake.baseUrl}/v1`, apiKey: fake.apiKey, model: 'gpt-test' });

  it('asks for a JSON object with the system prompt, the history and the selection as context', async () => {
    const reply = await provider().reply({ message: 'Something luxurious', history: [{ role: 'assistant', content: 'Hello' }], selectedClipCount: 3, clips, projectName: 'Harbour View' });
    const sent = fake.requests[0];
    expect(sent.model).toBe('gpt-test');
    expect(sent.response_format).toEqual({ type: 'json_object' });
    expect(sent.messages[0].role).toBe('system');
    expect(sent.messages[0].content).toContain('JSON');
    expect(sent.messages[1]).toEqual({ role: 'assistant', content: 'Hello' });
    expect(sent.messages.at(-1)?.content).toContain('"c-drone"');
    expect(sent.messages.at(-1)?.content).toContain('User: Something luxurious');
    expect(reply.reply).toBe(answer.reply);
    expect(reply.preferences).toMatchObject({ aesthetic: 'luxury', energy_level: 'calm', copy_style: 'aspirational', generated_texts: answer.preferences.generated_texts });
    expect(reply.editing).toEqual({ transition: 'fade', pacing: 'calm', caption_position: 'top' });
    // a clip the user did not select is dropped
    expect(reply.clip_order?.map((o) => o.clip_id)).toEqual(['c-drone', 'c-walk']);
    expect(reply.analysis).toEqual({ ready_to_create: true, confidence_score: 0.9, missing_info: [] });
  });

  it('maps the service\'s failures to provider errors', async () => {
    await expect(new OpenAiChatProvider({ baseUrl: `${fake.baseUrl}/v1`, apiKey: 'sk-wrong', model: 'm' }).reply({ message: 'hi', history: [], selectedClipCount: 1 })).rejects.toMatchObject({ code: 'AUTH', httpStatus: 401 });
    fake.behaviour = 'server-error';
    await expect(provider().reply({ message: 'hi', history: [], selectedClipCount: 1 })).rejects.toMatchObject({ code: 'UNAVAILABLE', retryable: true });
    fake.behaviour = 'rate-limited';
    await expect(provider().reply({ message: 'hi', history: [], selectedClipCount: 1 })).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    fake.behaviour = 'not-json';
    await expect(provider().reply({ message: 'hi', history: [], selectedClipCount: 1 })).rejects.toMatchObject({ code: 'BAD_RESPONSE' });
    await expect(new OpenAiChatProvider({ baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'k', model: 'm' }).reply({ message: 'hi', history: [], selectedClipCount: 1 })).rejects.toBeInstanceOf(ProviderError);
  });

  it('is what createChatProvider gives for CHAT_PROVIDER=openai, behind a circuit breaker that opens after 5 failures', async () => {
    const chat = createChatProvider({ chatProvider: 'openai', chatBaseUrl: `${fake.baseUrl}/v1`, chatApiKey: fake.apiKey, chatModel: 'gpt-test' });
    expect((await chat.reply({ message: 'hi', history: [], selectedClipCount: 3, clips })).reply).toBe(answer.reply);
    fake.behaviour = 'server-error';
    for (let i = 0; i < 5; i += 1) await expect(chat.reply({ message: 'hi', history: [], selectedClipCount: 1 })).rejects.toBeInstanceOf(ProviderError);
    const before = fake.requests.length;
    await expect(chat.reply({ message: 'hi', history: [], selectedClipCount: 1 })).rejects.toThrow();
    expect(fake.requests.length).toBe(before);
    expect(chat.breaker.state).toBe('OPEN');
  });
});
