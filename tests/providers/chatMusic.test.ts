/**
 * Issue 44, acceptance 5 (music): both chat providers understand the music. The rule-based one reads "use the calm
 * track, quieter", "no music", volumes, fades and a start time against the workspace's track names; the
 * OpenAI-compatible one sends the tracks as context and its model's "music" is kept only for a listed track. Through
 * the API with the hosted provider (a local chat-completions server), the project's music follows and the reply is
 * the model's words.
 */
import { createApp } from '../../api/app';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import type { AestheticChatAnswer } from '../../domain/assembly';
import type { ChatMusicTrack } from '../../providers';
import { understandMusic } from '../../providers/local/chatMusic';
import { RuleBasedChatProvider } from '../../providers/local/chat';
import { OpenAiChatProvider } from '../../providers/openai/chat';
import { closeTemporalClient } from '../../services/platform/temporalClient';
import { makeAudio } from '../support/audio';
import { createTestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { startFakeChatCompletions, type FakeChatCompletions } from '../support/fakeChatCompletions';
import { request, serve } from '../support/http';

const CALM = '0b9f3c1e-1111-4a4a-8a8a-000000000001';
const DRUMS = '0b9f3c1e-2222-4a4a-8a8a-000000000002';
const tracks: ChatMusicTrack[] = [
  { id: CALM, name: 'Calm piano', duration: 95 },
  { id: DRUMS, name: 'Upbeat drums', duration: 40 },
];

describe('the rule-based chat and music', () => {
  const chat = new RuleBasedChatProvider();

  it('"use the calm track, quieter" picks the track at 70% and says so; "calm" does not set the pace', async () => {
    const reply = await chat.reply({ message: 'Use the calm track, quieter', history: [], selectedClipCount: 2, musicTracks: tracks, music: null });
    expect(reply.editing?.music).toEqual({ track_id: CALM, offset_seconds: 0, volume: 0.7, fade_in_seconds: 1, fade_out_seconds: 2 });
    expect(reply.reply).toMatch(/^Music: Calm piano at 70% volume, fading in over 1 s and out over 2 s\./);
    expect(reply.preferences.energy_level).toBeUndefined();
  });

  it('"no music" takes the music out', async () => {
    const reply = await chat.reply({ message: 'No music, please', history: [], selectedClipCount: 1, musicTracks: tracks, music: { track_id: CALM, volume: 0.5 } });
    expect(reply.editing?.music).toBe('none');
    expect(reply.reply).toContain('No music: the video stays silent.');
  });

  it('changes the music playing now: louder up to full volume, a percentage, fades and a start time', () => {
    const now = { track_id: DRUMS, offset_seconds: 0, volume: 0.8, fade_in_seconds: 1, fade_out_seconds: 2 };
    expect(understandMusic('a bit louder', tracks, now).music).toMatchObject({ track_id: DRUMS, volume: 1 });
    expect(understandMusic('music at 40%', tracks, now).music).toMatchObject({ volume: 0.4 });
    expect(understandMusic('fade in over 2 seconds and fade out 4 s', tracks, now).music).toMatchObject({ fade_in_seconds: 2, fade_out_seconds: 4 });
    expect(understandMusic('no fades', tracks, now).music).toMatchObject({ fade_in_seconds: 0, fade_out_seconds: 0 });
    expect(understandMusic('start the song at 0:15', tracks, now).music).toMatchObject({ offset_seconds: 15 });
    // past the track's end: from its start
    expect(understandMusic('start the song at 2:00', tracks, now).music).toMatchObject({ offset_seconds: 0 });
    // a message about something else leaves the music as it is
    expect(understandMusic('slow fades between the clips', tracks, now)).toEqual({});
  });

  it('asks which track when none is playing or named, and points to the Music page when there is none', () => {
    expect(understandMusic('quieter music', tracks, null)).toEqual({ words: 'Which track should play? Calm piano, Upbeat drums.' });
    expect(understandMusic('add some music', [], null)).toEqual({ words: 'There is no music in this workspace yet: add tracks on the Music page.' });
  });
});

describe('the OpenAI-compatible chat and music', () => {
  let fake: FakeChatCompletions;
  let music: unknown;

  beforeAll(async () => {
    fake = await startFakeChatCompletions(() =>
      JSON.stringify({
        reply: 'Calm piano it is, a little quieter at 60%.',
        preferences: { aesthetic: 'luxury', energy_level: 'calm', copy_style: 'no text', generated_texts: [] },
        editing: { transition: 'fade', pacing: 'calm', music },
        analysis: { ready_to_create: true, confidence_score: 0.9, missing_info: [] },
      }),
    );
  });
  afterAll(() => fake.close());

  const provider = () => new OpenAiChatProvider({ baseUrl: `${fake.baseUrl}/v1`, apiKey: fake.apiKey, model: 'gpt-test' });

  it('sends the tracks and the music playing now, and keeps the model\'s music only for a listed track', async () => {
    music = { track_id: CALM, volume: 0.6, fade_out_seconds: 3 };
    const reply = await provider().reply({ message: 'use the calm track, quieter', history: [], selectedClipCount: 1, musicTracks: tracks, music: null });
    const context = fake.requests.at(-1)?.messages.at(-1)?.content ?? '';
    expect(context).toContain('"music_tracks":[{"id":"0b9f3c1e-1111-4a4a-8a8a-000000000001","name":"Calm piano","duration":95}');
    expect(fake.requests.at(-1)?.messages[0].content).toContain('"music"');
    expect(reply.editing?.music).toEqual({ track_id: CALM, volume: 0.6, fade_out_seconds: 3 });

    music = 'none';
    expect((await provider().reply({ message: 'no music', history: [], selectedClipCount: 1, musicTracks: tracks })).editing?.music).toBe('none');
    // without a track id: the track playing now; a percentage is read as a fraction
    music = { volume: 45 };
    expect((await provider().reply({ message: 'quieter', history: [], selectedClipCount: 1, musicTracks: tracks, music: { track_id: DRUMS } })).editing?.music).toEqual({ track_id: DRUMS, volume: 0.45 });
    // a made-up track id: nothing of that music is taken
    music = { track_id: 'made-up', volume: 0.2 };
    expect((await provider().reply({ message: 'quieter', history: [], selectedClipCount: 1, musicTracks: tracks, music: { track_id: DRUMS } })).editing?.music).toBeUndefined();
    // nothing playing and no listed track: no music change
    expect((await provider().reply({ message: 'quieter', history: [], selectedClipCount: 1, musicTracks: tracks })).editing?.music).toBeUndefined();
  });

  it('through the API the project plays the track the model chose, and the reply is its words', async () => {
    const server = await serve(createApp({ config: loadConfig(), knex: testKnex(), logger, chat: provider() }));
    try {
      const user = await createTestUser(server.baseUrl);
      const project = await request<{ project: { id: string } }>(server.baseUrl, '/api/projects', { token: user.token, json: { name: 'Harbour Villas' } });
      const uploaded = await request<{ track: { id: string } }>(server.baseUrl, `/api/workspaces/${user.id}/music?name=Calm%20piano.mp3`, {
        method: 'POST',
        token: user.token,
        body: await makeAudio('mp3', { seconds: 5 }),
        headers: { 'content-type': 'application/octet-stream' },
      });
      music = { track_id: uploaded.body.track.id, volume: 0.6 };
      const res = await request<AestheticChatAnswer>(server.baseUrl, `/api/projects/${project.body.project.id}/aesthetic`, { token: user.token, json: { message: 'use the calm track, quieter' } });
      expect(res.status).toBe(200);
      expect(res.body.editing_config.music).toEqual({ track_id: uploaded.body.track.id, offset_seconds: 0, volume: 0.6, fade_in_seconds: 1, fade_out_seconds: 2 });
      expect(res.body.chat_history.at(-1)?.content).toBe('Calm piano it is, a little quieter at 60%.');
      // another workspace's track (or none of this one's) changes nothing
      music = { track_id: CALM, volume: 0.3 };
      const again = await request<AestheticChatAnswer>(server.baseUrl, `/api/projects/${project.body.project.id}/aesthetic`, { token: user.token, json: { message: 'the other one' } });
      expect(again.body.editing_config.music).toMatchObject({ track_id: uploaded.body.track.id, volume: 0.6 });
    } finally {
      await server.close();
      await closeTemporalClient();
      await closeTestKnex();
    }
  });
});
