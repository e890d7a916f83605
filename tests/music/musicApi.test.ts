/**
 * Issue 44, acceptance 3 and 7 (music): a workspace's tracks over HTTP. A track is accepted by probing and decoding
 * its content (MP3, WAV, M4A, AAC, FLAC), never by its name; at most 20 MB and 10 minutes. Every refusal (empty,
 * too large, too long, not audio, another audio format, a corrupt file) is a clear 4xx and stores nothing: no
 * object, no row. Members add, rename and delete; viewers list and play; another workspace's track is not found.
 * The music picker and the editing chat set a project's music; the dry run shows it in the edit.
 */
import type { Knex } from 'knex';
import { createApp } from '../../api/app';
import { loadConfig } from '../../config/env';
import { logger } from '../../config/logger';
import type { AestheticChatAnswer } from '../../domain/assembly';
import { MUSIC_CODES, MUSIC_MAX_BYTES, MUSIC_MSG, type MusicTrackView } from '../../domain/music';
import { MUSIC_BUCKET, musicFolder } from '../../services/content/musicTracks';
import { closeTemporalClient } from '../../services/platform/temporalClient';
import { createStorage, type Storage } from '../../storage';
import { makeAudio } from '../support/audio';
import { closeTestKnex, testKnex } from '../support/db';
import { request, serve, type TestServer } from '../support/http';
import { createTeamWithRoles, createTeamWorkspace, inWorkspace, type TeamWithRoles, type TeamWorkspace } from '../support/workspaces';

let knex: Knex;
let server: TestServer;
let storage: Storage;
let team: TeamWithRoles;
let other: TeamWorkspace;

beforeAll(async () => {
  knex = testKnex();
  const config = loadConfig();
  storage = createStorage(config);
  server = await serve(createApp({ config, knex, logger }));
  team = await createTeamWithRoles(server.baseUrl);
  other = await createTeamWorkspace(server.baseUrl);
}, 60_000);

afterAll(async () => {
  await server.close();
  await closeTemporalClient();
  await closeTestKnex();
});

type TrackAnswer = { success: boolean; track: MusicTrackView; code?: string; error?: string };
type ListAnswer = { success: boolean; tracks: MusicTrackView[]; code?: string };

const musicPath = (workspaceId = team.id) => `/api/workspaces/${workspaceId}/music`;
const upload = (token: string, body: Buffer, name = 'track.mp3', workspaceId = team.id) =>
  request<TrackAnswer>(server.baseUrl, `${musicPath(workspaceId)}?name=${encodeURIComponent(name)}`, { method: 'POST', token, body, headers: { 'content-type': 'application/octet-stream' } });
const list = (token: string, workspaceId = team.id) => request<ListAnswer>(server.baseUrl, musicPath(workspaceId), { token });

async function storedTracks(workspaceId = team.id): Promise<string[]> {
  return (await storage.objects.list(MUSIC_BUCKET, musicFolder(workspaceId))).map((o) => o.path);
}

async function rowCount(workspaceId = team.id): Promise<number> {
  const [{ count }] = await knex('music_tracks').where({ workspace_id: workspaceId }).count<{ count: string }[]>('id as count');
  return Number(count);
}

/** Runs `refused` and checks it stored nothing: no new row, no new object. */
async function expectNothingStored(refused: () => Promise<unknown>): Promise<void> {
  const rows = await rowCount();
  const files = await storedTracks();
  await refused();
  expect(await rowCount()).toBe(rows);
  expect(await storedTracks()).toEqual(files);
}

describe('adding tracks: probed, never taken by their name', () => {
  it.each([
    ['mp3', 'audio/mpeg'],
    ['wav', 'audio/wav'],
    ['m4a', 'audio/mp4'],
    ['aac', 'audio/aac'],
    ['flac', 'audio/flac'],
  ] as const)('accepts %s, stores the original bytes and answers what probing found', async (kind, mime) => {
    const bytes = await makeAudio(kind, { seconds: 2, channels: 2 });
    // the name says nothing about the content: the probe decides
    const res = await upload(team.member.token, bytes, `Calm ${kind}.bin`);
    expect(res.status).toBe(201);
    expect(res.body.track).toMatchObject({ workspaceId: team.id, name: `Calm ${kind}.bin`, format: kind, mime, channels: 2, sizeBytes: bytes.length, createdBy: team.member.id });
    expect(Math.abs(res.body.track.durationSeconds - 2)).toBeLessThan(0.15);
    const row = await knex('music_tracks').where({ id: res.body.track.id }).first();
    expect(row).toMatchObject({ workspace_id: team.id, storage_bucket: 'videos', storage_path: `music/${team.id}/${res.body.track.id}.${kind}` });
    const played = await fetch(new URL(res.body.track.url, server.baseUrl));
    expect(played.status).toBe(200);
    expect(played.headers.get('content-type')).toBe(mime);
    expect(Buffer.from(await played.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it('drops the audio extension from the name, and names a track without one', async () => {
    const bytes = await makeAudio('mp3', { seconds: 1 });
    expect((await upload(team.member.token, bytes, 'Harbour sunrise.MP3')).body.track.name).toBe('Harbour sunrise');
    const unnamed = await request<TrackAnswer>(server.baseUrl, musicPath(), { method: 'POST', token: team.member.token, body: bytes, headers: { 'content-type': 'application/octet-stream' } });
    expect(unnamed.status).toBe(201);
    expect(unnamed.body.track.name).toBe('Untitled track');
  });

  it('refuses an empty file with 400 and stores nothing', async () => {
    await expectNothingStored(async () => {
      const res = await upload(team.member.token, Buffer.alloc(0));
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ success: false, code: MUSIC_CODES.empty, error: MUSIC_MSG.empty });
    });
  });

  it('refuses more than 20 MB with 413 whether it says so up front or streams it, and stores nothing', async () => {
    await expectNothingStored(async () => {
      const res = await upload(team.member.token, Buffer.alloc(MUSIC_MAX_BYTES + 1, 1), 'huge.wav');
      expect(res.status).toBe(413);
      expect(res.body).toMatchObject({ code: MUSIC_CODES.tooLarge, error: MUSIC_MSG.tooLarge });
    });
    await expectNothingStored(async () => {
      // no content-length: the body is counted as it arrives
      const chunk = Buffer.alloc(1024 * 1024, 2);
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent > MUSIC_MAX_BYTES + chunk.length) controller.close();
          else {
            sent += chunk.length;
            controller.enqueue(chunk);
          }
        },
      });
      const res = await fetch(`${server.baseUrl}${musicPath()}?name=stream.wav`, {
        method: 'POST',
        headers: { authorization: `Bearer ${team.member.token}`, 'content-type': 'application/octet-stream' },
        body,
        duplex: 'half',
      } as RequestInit);
      expect(res.status).toBe(413);
      expect(((await res.json()) as { code: string }).code).toBe(MUSIC_CODES.tooLarge);
    });
  });

  it('accepts a valid track just under 20 MB', async () => {
    // 48 kHz stereo 16-bit PCM: 192,000 bytes a second, so 104 s is 19.97 MB
    const bytes = await makeAudio('wav', { seconds: 104, sampleRate: 48000, channels: 2 });
    expect(bytes.length).toBeLessThanOrEqual(MUSIC_MAX_BYTES);
    const res = await upload(team.member.token, bytes, 'Long calm.wav');
    expect(res.status).toBe(201);
    expect(res.body.track.sizeBytes).toBe(bytes.length);
  }, 120_000);

  it('refuses a track longer than 10 minutes with 400 and stores nothing', async () => {
    const long = await makeAudio('mp3', { seconds: 601, sampleRate: 8000 });
    expect(long.length).toBeLessThan(MUSIC_MAX_BYTES);
    await expectNothingStored(async () => {
      const res = await upload(team.member.token, long, 'too long.mp3');
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: MUSIC_CODES.tooLong, error: MUSIC_MSG.tooLong });
    });
  }, 60_000);

  it('refuses corrupt files and files that are not audio, whatever they are named, with 400 and stores nothing', async () => {
    const mp3 = await makeAudio('mp3', { seconds: 2 });
    const corrupt = Buffer.from(mp3);
    // the frames' data overwritten: the header may still look like an MP3, nothing decodes
    for (let i = 0; i < corrupt.length; i += 1) corrupt[i] = (i * 7919) % 251;
    const cases: Array<[string, Buffer]> = [
      ['random bytes', Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 31) % 256))],
      ['corrupt mp3', corrupt],
      ['text', Buffer.from('These are the lyrics, not the song.\n'.repeat(50))],
      ['png', Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64')],
      ['video with sound', await makeAudio('video', { seconds: 1 })],
    ];
    for (const [label, bytes] of cases) {
      await expectNothingStored(async () => {
        const res = await upload(team.member.token, bytes, `${label}.mp3`);
        expect({ label, status: res.status, code: res.body.code }).toEqual({ label, status: 400, code: MUSIC_CODES.notAudio });
        expect(res.body.error).toBe(MUSIC_MSG.notAudio);
      });
    }
  }, 60_000);

  it('refuses audio in another format (AIFF) with 400 and stores nothing', async () => {
    const aiff = await makeAudio('aiff', { seconds: 1 });
    await expectNothingStored(async () => {
      const res = await upload(team.member.token, aiff, 'song.wav');
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: MUSIC_CODES.unsupported, error: MUSIC_MSG.unsupported });
    });
  });
});

describe('who may do what with the tracks', () => {
  let track: MusicTrackView;

  beforeAll(async () => {
    const res = await upload(team.member.token, await makeAudio('mp3', { seconds: 2 }), 'Roles.mp3');
    track = res.body.track;
  });

  it('every member lists and plays the tracks, newest first; a non-member finds no workspace', async () => {
    for (const user of Object.values(team.byRole)) {
      const res = await list(user.token);
      expect(res.status).toBe(200);
      expect(res.body.tracks[0].createdAt >= res.body.tracks.at(-1)!.createdAt).toBe(true);
      expect(res.body.tracks.map((t) => t.id)).toContain(track.id);
    }
    expect((await list(team.outsider.token)).status).toBe(404);
  });

  it('a viewer may not add, rename or delete (403), and nothing changes', async () => {
    await expectNothingStored(async () => {
      const add = await upload(team.viewer.token, await makeAudio('mp3', { seconds: 1 }));
      expect(add.status).toBe(403);
      expect(add.body.code).toBe('WORKSPACE_FORBIDDEN');
      const rename = await request(server.baseUrl, `${musicPath()}/${track.id}`, { method: 'PATCH', token: team.viewer.token, json: { name: 'Mine now' } });
      expect(rename.status).toBe(403);
      const del = await request(server.baseUrl, `${musicPath()}/${track.id}`, { method: 'DELETE', token: team.viewer.token });
      expect(del.status).toBe(403);
    });
    expect((await knex('music_tracks').where({ id: track.id }).first('name')).name).toBe('Roles');
  });

  it('members rename a track; a blank or too long name is 400', async () => {
    const renamed = await request<TrackAnswer>(server.baseUrl, `${musicPath()}/${track.id}`, { method: 'PATCH', token: team.member.token, json: { name: '  Calm piano  ' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.track.name).toBe('Calm piano');
    const blank = await request<TrackAnswer>(server.baseUrl, `${musicPath()}/${track.id}`, { method: 'PATCH', token: team.member.token, json: { name: '   ' } });
    expect(blank.status).toBe(400);
    expect(blank.body.error).toBe(MUSIC_MSG.nameRequired);
    const long = await request<TrackAnswer>(server.baseUrl, `${musicPath()}/${track.id}`, { method: 'PATCH', token: team.member.token, json: { name: 'x'.repeat(101) } });
    expect(long.status).toBe(400);
    expect(long.body.error).toBe(MUSIC_MSG.nameTooLong);
  });

  it("another workspace's track is not found through this workspace, nor its own through the other", async () => {
    const foreign = (await upload(other.owner.token, await makeAudio('mp3', { seconds: 1 }), 'Foreign.mp3', other.id)).body.track;
    // the team's owner is no member of the other workspace
    expect((await list(team.owner.token, other.id)).status).toBe(404);
    for (const [method, json] of [['PATCH', { name: 'Taken' }], ['DELETE', undefined]] as const) {
      const res = await request(server.baseUrl, `${musicPath()}/${foreign.id}`, { method, token: team.owner.token, json });
      expect({ method, status: res.status, code: res.body.code }).toEqual({ method, status: 404, code: MUSIC_CODES.notFound });
    }
    expect(await knex('music_tracks').where({ id: foreign.id }).first('name')).toEqual({ name: 'Foreign' });
    expect((await list(other.owner.token, other.id)).body.tracks.map((t) => t.id)).toEqual([foreign.id]);
  });

  it('members delete a track: its row and its file go', async () => {
    const doomed = (await upload(team.member.token, await makeAudio('flac', { seconds: 1 }), 'Doomed.flac')).body.track;
    expect(await storedTracks()).toContain(`music/${team.id}/${doomed.id}.flac`);
    const res = await request(server.baseUrl, `${musicPath()}/${doomed.id}`, { method: 'DELETE', token: team.member.token });
    expect(res.status).toBe(200);
    expect(await knex('music_tracks').where({ id: doomed.id }).first()).toBeUndefined();
    expect(await storedTracks()).not.toContain(`music/${team.id}/${doomed.id}.flac`);
    expect((await request(server.baseUrl, `${musicPath()}/${doomed.id}`, { method: 'DELETE', token: team.member.token })).status).toBe(404);
  });
});

describe("a project's music: the picker and the editing chat", () => {
  let projectId: string;
  let otherProjectId: string;
  let calm: MusicTrackView;
  let upbeat: MusicTrackView;

  const setMusic = (token: string, json: unknown, project = projectId, workspaceId = team.id) =>
    request<Omit<AestheticChatAnswer, 'error'> & { code?: string; error?: string | null }>(server.baseUrl, `/api/projects/${project}/aesthetic/music`, { method: 'PUT', token, json, headers: inWorkspace(workspaceId) });
  const say = (token: string, message: string) =>
    request<AestheticChatAnswer>(server.baseUrl, `/api/projects/${projectId}/aesthetic`, { token, json: { message }, headers: inWorkspace(team.id) });

  beforeAll(async () => {
    const project = await request<{ project: { id: string } }>(server.baseUrl, '/api/projects', { token: team.member.token, json: { name: 'Harbour Villas' }, headers: inWorkspace(team.id) });
    projectId = project.body.project.id;
    const theirs = await request<{ project: { id: string } }>(server.baseUrl, '/api/projects', { token: other.owner.token, json: { name: 'Elsewhere' }, headers: inWorkspace(other.id) });
    otherProjectId = theirs.body.project.id;
    calm = (await upload(team.member.token, await makeAudio('mp3', { seconds: 20 }), 'Calm piano.mp3')).body.track;
    upbeat = (await upload(team.member.token, await makeAudio('mp3', { seconds: 20, frequency: 880 }), 'Upbeat drums.mp3')).body.track;
  }, 60_000);

  it('the picker sets the track, offset, volume and fades; null is no music', async () => {
    const res = await setMusic(team.member.token, { trackId: calm.id, offsetSeconds: 4, volume: 0.6, fadeInSeconds: 0.5, fadeOutSeconds: 3 });
    expect(res.status).toBe(200);
    expect(res.body.editing_config.music).toEqual({ track_id: calm.id, offset_seconds: 4, volume: 0.6, fade_in_seconds: 0.5, fade_out_seconds: 3 });
    const state = await request<AestheticChatAnswer>(server.baseUrl, `/api/projects/${projectId}/aesthetic`, { token: team.viewer.token, headers: inWorkspace(team.id) });
    expect(state.body.editing_config.music?.track_id).toBe(calm.id);
    const none = await setMusic(team.member.token, { trackId: null });
    expect(none.status).toBe(200);
    expect(none.body.editing_config.music).toBeNull();
  });

  it('the picker refuses a viewer (403), an offset past the track (400), a bad volume (400) and another workspace’s track (404)', async () => {
    expect((await setMusic(team.viewer.token, { trackId: calm.id })).status).toBe(403);
    const past = await setMusic(team.member.token, { trackId: calm.id, offsetSeconds: 25 });
    expect(past.status).toBe(400);
    expect(past.body.error).toBe(MUSIC_MSG.offsetPastEnd);
    expect((await setMusic(team.member.token, { trackId: calm.id, volume: 3 })).status).toBe(400);
    const foreign = (await upload(other.owner.token, await makeAudio('mp3', { seconds: 2 }), 'Theirs.mp3', other.id)).body.track;
    const res = await setMusic(team.member.token, { trackId: foreign.id });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe(MUSIC_CODES.notFound);
    // nor may the other workspace's owner put the team's track into their project
    expect((await setMusic(other.owner.token, { trackId: calm.id }, otherProjectId, other.id)).status).toBe(404);
    expect((await setMusic(team.member.token, { trackId: 'not-a-track' })).status).toBe(404);
  });

  it('the rule-based chat understands "use the calm track, quieter" and "no music", and says it in words', async () => {
    const chosen = await say(team.member.token, 'Use the calm track, quieter');
    expect(chosen.status).toBe(200);
    expect(chosen.body.editing_config.music).toMatchObject({ track_id: calm.id, volume: 0.7 });
    const reply = chosen.body.chat_history.at(-1)?.content ?? '';
    expect(reply).toContain('Calm piano at 70% volume');
    expect(reply).not.toMatch(/track_id|[0-9a-f]{8}-[0-9a-f]{4}/);
    // "calm" named the track, not the pace
    expect(chosen.body.preferences.energy_level).toBeNull();
    const quieter = await say(team.member.token, 'a bit quieter still');
    expect(quieter.body.editing_config.music).toMatchObject({ track_id: calm.id, volume: 0.49 });
    const drums = await say(team.member.token, 'switch to the upbeat drums song and fade out over 3 seconds');
    expect(drums.body.editing_config.music).toMatchObject({ track_id: upbeat.id, volume: 1, fade_out_seconds: 3 });
    const none = await say(team.member.token, 'no music please');
    expect(none.body.editing_config.music).toBeNull();
    expect(none.body.chat_history.at(-1)?.content).toContain('No music: the video stays silent.');
  });

  it('deleting a track takes it out of the projects that chose it', async () => {
    const doomed = (await upload(team.member.token, await makeAudio('mp3', { seconds: 3 }), 'Short loop.mp3')).body.track;
    expect((await setMusic(team.member.token, { trackId: doomed.id })).body.editing_config.music?.track_id).toBe(doomed.id);
    expect((await request(server.baseUrl, `${musicPath()}/${doomed.id}`, { method: 'DELETE', token: team.member.token })).status).toBe(200);
    const state = await request<AestheticChatAnswer>(server.baseUrl, `/api/projects/${projectId}/aesthetic`, { token: team.member.token, headers: inWorkspace(team.id) });
    expect(state.body.editing_config.music).toBeNull();
  });
});

describe('deleting the workspace', () => {
  it('removes its tracks and their files', async () => {
    const doomed = await createTeamWorkspace(server.baseUrl);
    const added = await upload(doomed.owner.token, await makeAudio('wav', { seconds: 1 }), 'Leaving.wav', doomed.id);
    expect(added.status).toBe(201);
    expect(await storedTracks(doomed.id)).toHaveLength(1);
    expect((await request(server.baseUrl, `/api/workspaces/${doomed.id}`, { method: 'DELETE', token: doomed.owner.token })).status).toBe(200);
    expect(await storedTracks(doomed.id)).toEqual([]);
    expect(await rowCount(doomed.id)).toBe(0);
  });
});
