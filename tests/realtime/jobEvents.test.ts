import { closeTestKnex } from '../support/db';
import { openEventStream } from '../support/eventStream';
import { clipUser, startClip, startClipApp, startClipWorker, type ClipTestApp, type RunningWorker } from '../clips/fixtures';

describe('events from a clip workflow', () => {
  let app: ClipTestApp;
  let worker: RunningWorker;

  beforeAll(async () => {
    app = await startClipApp();
    worker = await startClipWorker(app.taskQueue);
  });

  afterAll(async () => {
    await worker?.stop();
    await app?.close();
    await closeTestKnex();
  });

  it('streams the job from admission through rising progress to completed, with the reservation and the pending approval', async () => {
    const user = await clipUser(app.baseUrl);
    const stream = await openEventStream(app.baseUrl, { token: user.token });
    await stream.next((m) => m.event === 'ready');

    const started = await startClip(app.baseUrl, user, { platform: 'TikTok' });
    expect(started.status).toBe(200);
    const jobId = started.body.jobId;
    const ofJob = (m: { event: string; data: Record<string, unknown> }) => m.event === 'job' && m.data.jobId === jobId;

    expect((await stream.next(ofJob)).data).toMatchObject({ kind: 'job', job: 'clip', status: 'pending', projectId: user.projectId });
    await stream.next((m) => m.event === 'credits');
    const approval = await stream.next((m) => m.event === 'approval', 120_000);
    expect(approval.data).toMatchObject({ status: 'pending', contentType: 'clip', projectId: user.projectId });
    const completed = await stream.next((m) => ofJob(m) && m.data.status === 'completed', 30_000);
    expect(completed.data.progress).toBe(100);

    const progress = stream.messages.filter(ofJob).map((m) => Number(m.data.progress));
    expect(progress.length).toBeGreaterThan(3);
    for (let i = 1; i < progress.length; i += 1) expect(progress[i]).toBeGreaterThanOrEqual(progress[i - 1]);
    expect(progress.some((p) => p > 10 && p < 100)).toBe(true);
    // the approval is in the queue before the job says it is done
    expect(stream.messages.indexOf(approval)).toBeLessThan(stream.messages.indexOf(completed));
    stream.close();
  }, 180_000);
});
