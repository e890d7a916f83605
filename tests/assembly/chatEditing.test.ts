import { ASSEMBLY_MSG, CHAT_CLEAR_CONVERSATION, CHAT_SYNC_CLIPS, DEFAULT_EDITING_CONFIG, type AestheticChatAnswer } from '../../domain/assembly';
import type { AssemblyEdit } from '../../domain/assemblyTimeline';
import { createChatProvider } from '../../providers';
import { CHAT_AFTER_ASSEMBLY_NOTE } from '../../services/generation/aestheticChat';
import { startClipWorker, type RunningWorker } from '../clips/fixtures';
import { startFakeChatCompletions, type FakeChatCompletions } from '../support/fakeChatCompletions';
import { closeTestKnex, testKnex } from '../support/db';
import { request } from '../support/http';
import { assemble, assemblyUser, grabFrame, probeOutput, removeFixtures, startAssemblyApp, storeClip, waitForAssembly, withAssemblyFile, type AssemblyTestApp, type AssemblyUser, type StoredClip } from './fixtures';

type DryRun = { request: AssemblyEdit; preview: { totalDuration: number; clips: Array<{ transition_out: string | null; caption: string | null; transition_out_seconds: number }> } };

function chat(app: AssemblyTestApp, user: AssemblyUser, body: Record<string, unknown>, projectId = user.projectId) {
  return request<Omit<AestheticChatAnswer, 'error'> & { error: string | null }>(app.baseUrl, `/api/projects/${projectId}/aesthetic`, { token: user.token, json: body });
}

function syncClips(app: AssemblyTestApp, user: AssemblyUser, selected: unknown, projectId = user.projectId) {
  return request<Omit<AestheticChatAnswer, 'error'> & { error: string | null }>(app.baseUrl, `/api/projects/${projectId}/aesthetic/clips`, {
    method: 'PUT',
    token: user.token,
    json: { selected_clips: selected },
  });
}

function dryRun(app: AssemblyTestApp, user: AssemblyUser, clipIds: string[], extra: Record<string, unknown> = {}) {
  return request<DryRun>(app.baseUrl, '/api/video-assembly/dry-run', { token: user.token, json: { projectId: user.projectId, clipIds, ...extra } });
}

describe('the AI editing chat (local provider) and what it changes', () => {
  let app: AssemblyTestApp;
  let worker: RunningWorker;
  let user: AssemblyUser;
  let clips: StoredClip[];

  beforeAll(async () => {
    app = await startAssemblyApp();
    worker = await startClipWorker(app.taskQueue, { config: app.config });
    user = await assemblyUser(app.baseUrl);
    clips = [
      await storeClip(app.config, user, { seconds: 2, index: 0, movement: 'Walk Through' }),
      await storeClip(app.config, user, { seconds: 2, index: 1, movement: 'Drone Shot' }),
    ];
  }, 120_000);

  afterAll(async () => {
    await worker?.stop();
    await app?.close();
    await removeFixtures();
    await closeTestKnex();
  });

  it('starts empty, refuses an empty message, and keeps the conversation per project', async () => {
    const empty = await request<AestheticChatAnswer>(app.baseUrl, `/api/projects/${user.projectId}/aesthetic`, { token: user.token });
    expect(empty.status).toBe(200);
    expect(empty.body).toMatchObject({
      chat_history: [],
      preferences: { aesthetic: null, energy_level: null, copy_style: null, generated_texts: [], clip_selection: { selectedIds: [], order: [] } },
      editing_config: DEFAULT_EDITING_CONFIG,
      analysis: { ready_to_create: false, confidence_score: 0, missing_info: ['clips', 'aesthetic', 'energy_level', 'copy_style'] },
      workflow_analysis: { stage: 'selecting_clips' },
      clip_suggestions: [],
    });
    const blank = await chat(app, user, { message: '   ', selected_clips: [] });
    expect(blank.status).toBe(400);
    expect(blank.body.error).toBe(ASSEMBLY_MSG.typeMessage);

    const synced = await chat(app, user, { message: CHAT_SYNC_CLIPS, selected_clips: clips.map((c) => ({ id: c.id })), aspect_ratio: '16:9' });
    expect(synced.status).toBe(200);
    expect(synced.body.preferences.clip_selection).toEqual({ selectedIds: clips.map((c) => c.id), order: clips.map((c) => c.id) });
    expect(synced.body.chat_history).toHaveLength(1);
    expect(synced.body.chat_history[0]).toMatchObject({ role: 'assistant', content: expect.stringContaining('2 selected landscape clips') });
    expect(synced.body.workflow_analysis).toMatchObject({ stage: 'gathering_preferences', clip_count: 2, orientation: 'landscape', platform: 'youtube' });

    const other = await assemblyUser(app.baseUrl);
    const foreign = await request(app.baseUrl, `/api/projects/${user.projectId}/aesthetic`, { token: other.token });
    expect(foreign.status).toBe(404);
    const foreignPost = await chat(app, other, { message: 'hello' }, user.projectId);
    expect(foreignPost.status).toBe(404);
  });

  it('follows the selection without a message: what is still needed and the suggested order change, nothing is said', async () => {
    const ids = clips.map((c) => c.id);
    const before = await request<AestheticChatAnswer>(app.baseUrl, `/api/projects/${user.projectId}/aesthetic`, { token: user.token });
    const reversed = await syncClips(app, user, [...ids].reverse());
    expect(reversed.status).toBe(200);
    expect(reversed.body.chat_history).toEqual(before.body.chat_history);
    expect(reversed.body.preferences.clip_selection).toEqual({ selectedIds: [...ids].reverse(), order: [...ids].reverse() });
    expect(reversed.body.clip_suggestions.map((s) => s.clip_id)).toEqual([...ids].reverse());
    expect(reversed.body.analysis.missing_info).toEqual(['aesthetic', 'energy_level', 'copy_style']);

    const none = await syncClips(app, user, []);
    expect(none.status).toBe(200);
    expect(none.body.analysis.missing_info).toEqual(['clips', 'aesthetic', 'energy_level', 'copy_style']);
    expect(none.body.clip_suggestions).toEqual([]);
    expect(none.body.workflow_analysis).toMatchObject({ stage: 'selecting_clips', clip_count: 0 });
    // what was said stays on the server
    const reread = await request<AestheticChatAnswer>(app.baseUrl, `/api/projects/${user.projectId}/aesthetic`, { token: user.token });
    expect(reread.body.preferences.clip_selection.selectedIds).toEqual([]);

    // the same checks as an assembly's selection, and only on the user's own project
    expect((await syncClips(app, user, ['00000000-0000-4000-8000-000000000000'])).status).toBe(404);
    const six = await syncClips(app, user, Array.from({ length: 6 }, (_, i) => `00000000-0000-4000-8000-00000000000${i}`));
    expect(six.status).toBe(400);
    expect(six.body.error).toBe(ASSEMBLY_MSG.maxClips);
    expect((await syncClips(app, user, 'not a list')).status).toBe(400);
    const other = await assemblyUser(app.baseUrl);
    expect((await syncClips(app, other, ids, user.projectId)).status).toBe(404);
    expect((await syncClips(app, other, ids)).status).toBe(404);

    expect((await syncClips(app, user, ids.map((id) => ({ id })))).body.preferences.clip_selection.order).toEqual(ids);
  });

  it('changes the dry-run: transition, pacing, captions and the total duration follow the chat', async () => {
    const ids = clips.map((c) => c.id);
    const before = await dryRun(app, user, ids);
    expect(before.status).toBe(200);
    expect(before.body.preview.totalDuration).toBeCloseTo(3.5, 3); // 2 + 2 - 0.5 (default fade)
    expect(before.body.preview.clips[0]).toMatchObject({ transition_out: 'fade', transition_out_seconds: 0.5, caption: null });
    expect(before.body.request.timeline.tracks).toHaveLength(1);

    const res = await chat(app, user, { message: 'Make it cinematic and calm with professional captions', chat_history: [], selected_clips: ids, aspect_ratio: '16:9' });
    expect(res.status).toBe(200);
    expect(res.body.error).toBeNull();
    expect(res.body.preferences).toMatchObject({ aesthetic: 'cinematic', energy_level: 'calm', copy_style: 'professional' });
    expect(res.body.preferences.generated_texts).toHaveLength(2);
    expect(res.body.editing_config).toMatchObject({ transition: 'dissolve', pacing: 'calm', transition_duration: 1, source: 'chat', captions: res.body.preferences.generated_texts });
    expect(res.body.analysis).toEqual({ ready_to_create: true, confidence_score: 1, missing_info: [] });
    expect(res.body.workflow_analysis.stage).toBe('ready');
    // the drone shot is suggested first
    expect(res.body.clip_suggestions.map((s) => s.clip_id)).toEqual([ids[1], ids[0]]);
    expect(res.body.chat_history.slice(-2).map((m) => m.role)).toEqual(['user', 'assistant']);

    const after = await dryRun(app, user, ids);
    expect(after.body.preview.totalDuration).toBeCloseTo(3, 3); // 2 + 2 - 1 (calm dissolve)
    expect(after.body.preview.clips[0]).toMatchObject({ transition_out: 'dissolve', transition_out_seconds: 1, caption: res.body.preferences.generated_texts[0] });
    expect(after.body.request.timeline.tracks).toHaveLength(2);
    // the editor's own transitions win over the chat's
    const edited = await dryRun(app, user, ids, { editorState: { transitions: [{ type: 'wipeRight', duration: 0.25 }] } });
    expect(edited.body.preview.clips[0]).toMatchObject({ transition_out: 'wipeRight', transition_out_seconds: 0.25 });

    const reread = await request<AestheticChatAnswer>(app.baseUrl, `/api/projects/${user.projectId}/aesthetic`, { token: user.token });
    expect(reread.body.editing_config).toEqual(res.body.editing_config);
    expect(reread.body.chat_history).toEqual(res.body.chat_history);
  });

  it('changes the rendered video: the chat\'s cut is what the worker renders, captions burnt in', async () => {
    const ids = clips.map((c) => c.id);
    const chatted = await assemble(app.baseUrl, user, ids);
    expect(chatted.status).toBe(200);
    // the same clips into a project without a chat: the default cut
    const plainProject = await request<{ project: { id: string } }>(app.baseUrl, '/api/projects', { token: user.token, json: { name: 'Plain' } });
    const plain = await assemble(app.baseUrl, user, ids, { projectId: plainProject.body.project.id });
    expect(plain.status).toBe(200);
    const [a, b] = await Promise.all([
      waitForAssembly(app.baseUrl, user, chatted.body.jobId as string, { timeoutMs: 300_000 }),
      waitForAssembly(app.baseUrl, user, plain.body.jobId as string, { timeoutMs: 300_000 }),
    ]);
    expect(a.job.status).toBe('completed');
    expect(b.job.status).toBe('completed');
    // probes and frames of the stored videos, through the run's storage (local disk or S3)
    const stored = (jobId: string) => ({ probe: () => withAssemblyFile(user.id, jobId, 'video.mp4', probeOutput), frame: (at: number) => withAssemblyFile(user.id, jobId, 'video.mp4', (f) => grabFrame(f, at)) });
    const chattedInfo = await stored(a.job.jobId).probe();
    const plainInfo = await stored(b.job.jobId).probe();
    expect(Math.abs(chattedInfo.duration - 3)).toBeLessThan(0.1);
    expect(Math.abs(plainInfo.duration - 3.5)).toBeLessThan(0.1);
    // the completed assembly used up its clips: the chat forgets them and what was written for them, keeps the look
    const after = await request<AestheticChatAnswer>(app.baseUrl, `/api/projects/${user.projectId}/aesthetic`, { token: user.token });
    expect(after.body.preferences).toMatchObject({ aesthetic: 'cinematic', energy_level: 'calm', copy_style: 'professional', generated_texts: [], clip_selection: { selectedIds: [], order: [] } });
    expect(after.body.clip_suggestions).toEqual([]);
    expect(after.body.editing_config).toMatchObject({ transition: 'dissolve', pacing: 'calm', captions: [] });
    expect(after.body.analysis).toMatchObject({ ready_to_create: false, missing_info: ['clips'] });
    expect(after.body.chat_history[after.body.chat_history.length - 1]).toMatchObject({ role: 'assistant', content: CHAT_AFTER_ASSEMBLY_NOTE });
    expect(after.body.chat_history.filter((m) => m.content === CHAT_AFTER_ASSEMBLY_NOTE)).toHaveLength(1);

    const video = await testKnex()('compiled_videos').where({ id: a.job.result?.compiledVideoId }).first('editing_data');
    expect(video.editing_data).toMatchObject({ transition: 'dissolve', pacing: 'calm', transition_duration: 1 });
    expect(video.editing_data.captions).toHaveLength(2);

    // at 0.5 s both show the first clip alone: only the caption band at the bottom differs
    const [withCaption, without] = await Promise.all([stored(a.job.jobId).frame(0.5), stored(b.job.jobId).frame(0.5)]);
    const size = 96;
    const rowDiff = (from: number, to: number) => {
      let changed = 0;
      for (let y = from; y < to; y += 1) for (let x = 0; x < size; x += 1) if (Math.abs(withCaption[y * size + x] - without[y * size + x]) > 24) changed += 1;
      return changed / ((to - from) * size);
    };
    expect(rowDiff(Math.round(size * 0.75), Math.round(size * 0.9))).toBeGreaterThan(0.05);
    expect(rowDiff(Math.round(size * 0.2), Math.round(size * 0.5))).toBeLessThan(0.02);

    // a video waiting for approval is not the library's to delete
    const early = await request(app.baseUrl, `/api/projects/${user.projectId}/compiled-videos/${a.job.result?.compiledVideoId}`, { method: 'DELETE', token: user.token });
    expect(early.status).toBe(404);
    expect(await testKnex()('compiled_videos').where({ id: a.job.result?.compiledVideoId }).first('id')).toBeDefined();

    // both are in the Activity view's list: free, finished
    const jobs = await request<{ jobs: Array<{ kind: string; id: string; state: string; cost: number; progress: number; item: string }> }>(app.baseUrl, '/api/jobs', { token: user.token });
    const assemblies = jobs.body.jobs.filter((j) => j.kind === 'assembly');
    expect(assemblies.map((j) => j.id).sort()).toEqual([a.job.jobId, b.job.jobId].sort());
    for (const job of assemblies) expect(job).toMatchObject({ state: 'completed', cost: 0, progress: 100, item: '2 clips for YouTube 16:9' });
  }, 360_000);

  it('clears the conversation but keeps the selection', async () => {
    expect((await syncClips(app, user, clips.map((c) => c.id))).status).toBe(200);
    const cleared = await chat(app, user, { message: CHAT_CLEAR_CONVERSATION });
    expect(cleared.status).toBe(200);
    expect(cleared.body.chat_history).toEqual([]);
    expect(cleared.body.preferences).toMatchObject({ aesthetic: null, energy_level: null, copy_style: null, generated_texts: [] });
    expect(cleared.body.preferences.clip_selection.selectedIds).toEqual(clips.map((c) => c.id));
    expect(cleared.body.editing_config).toEqual(DEFAULT_EDITING_CONFIG);
    expect(cleared.body.analysis.missing_info).toEqual(['aesthetic', 'energy_level', 'copy_style']);
  });
});

describe('the AI editing chat on a hosted OpenAI-compatible service', () => {
  let fake: FakeChatCompletions;
  let app: AssemblyTestApp;
  let user: AssemblyUser;
  let clipIds: string[];

  beforeAll(async () => {
    fake = await startFakeChatCompletions((req) => {
      const context = req.messages.at(-1)?.content ?? '';
      const ids = [...context.matchAll(/"id":"([0-9a-f-]{36})"/g)].map((m) => m[1]);
      return JSON.stringify({
        reply: 'Bold slides, energetic, playful captions.',
        preferences: { aesthetic: 'vibrant', energy_level: 'energetic', copy_style: 'playful', generated_texts: ['Hello!', 'Come in!'] },
        editing: { transition: 'slideUp', pacing: 'energetic' },
        clip_order: ids.reverse().map((id) => ({ clip_id: id, reason: 'punchier' })),
        analysis: { ready_to_create: true, confidence_score: 0.8, missing_info: [] },
      });
    });
    app = await startAssemblyApp({ chat: createChatProvider({ chatProvider: 'openai', chatBaseUrl: `${fake.baseUrl}/v1`, chatApiKey: fake.apiKey, chatModel: 'gpt-test' }) });
    user = await assemblyUser(app.baseUrl);
    clipIds = [(await storeClip(app.config, user, { seconds: 2, index: 0 })).id, (await storeClip(app.config, user, { seconds: 2, index: 1 })).id];
  });

  afterAll(async () => {
    await app?.close();
    await fake?.close();
    await removeFixtures();
    await closeTestKnex();
  });

  it('takes the model\'s JSON into the chat state and the dry-run', async () => {
    const res = await chat(app, user, { message: 'Make it pop', selected_clips: clipIds, aspect_ratio: '16:9' });
    expect(res.status).toBe(200);
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0].response_format).toEqual({ type: 'json_object' });
    expect(res.body.chat_history.at(-1)).toMatchObject({ role: 'assistant', content: 'Bold slides, energetic, playful captions.' });
    expect(res.body.editing_config).toMatchObject({ transition: 'slideUp', pacing: 'energetic', transition_duration: 0.25, captions: ['Hello!', 'Come in!'] });
    expect(res.body.clip_suggestions.map((s) => s.clip_id)).toEqual([clipIds[1], clipIds[0]]);
    const dry = await dryRun(app, user, clipIds);
    expect(dry.body.preview.totalDuration).toBeCloseTo(3.75, 3);
    expect(dry.body.preview.clips[0]).toMatchObject({ transition_out: 'slideUp', caption: 'Hello!' });
  });

  it('answers 503 when the service fails and keeps nothing of the failed message', async () => {
    const before = await request<AestheticChatAnswer>(app.baseUrl, `/api/projects/${user.projectId}/aesthetic`, { token: user.token });
    fake.behaviour = 'server-error';
    const res = await chat(app, user, { message: 'and now?', selected_clips: clipIds });
    fake.behaviour = 'answer';
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ success: false, error: expect.any(String) });
    const after = await request<AestheticChatAnswer>(app.baseUrl, `/api/projects/${user.projectId}/aesthetic`, { token: user.token });
    expect(after.body.chat_history).toEqual(before.body.chat_history);
  });
});
