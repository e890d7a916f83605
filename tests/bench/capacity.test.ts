/**
 * The capacity benchmark's parts that must be right for its figures to mean anything: the fake fal's latency mode
 * (seeded durations in range, fal's status answers meanwhile, on a clock the test moves) and the report's arithmetic.
 */
import { FalQueueClient } from '../../providers/fal/queueClient';
import { FalImageToVideoProvider, encodeFalJobId } from '../../providers/fal/providers';
import {
  PeakTracker,
  activityDurations,
  checkCharges,
  metricSum,
  parsePrometheus,
  parseSecondsRange,
  rssPerJobKb,
  scheduleToStart,
  spread,
  throughputPerMinute,
  type HistoryEventLite,
} from '../../bench/capacity/report';
import { drawLatency, latencyPhase, seededRandom, startFakeFal, type FakeFal } from '../support/fakeFal';

const KEY = 'capacity-test-key';
const VIDEO = 'fake/kling/v2/image-to-video';
const IMAGE = 'fake/edit';

describe('fake fal latency mode', () => {
  let fal: FakeFal;
  let clock = 1_000_000;
  let client: FalQueueClient;

  beforeAll(async () => {
    fal = await startFakeFal({
      apiKey: KEY,
      models: { [VIDEO]: { kind: 'video', behaviour: 'succeed' }, [IMAGE]: { kind: 'image-edit', behaviour: 'succeed' } },
      latency: { clipMs: [60_000, 120_000], imageMs: [5_000, 15_000], seed: 7 },
      video: { width: 64, height: 36, seconds: 1 },
      keepVideoInputs: false,
      now: () => clock,
    });
    client = new FalQueueClient({ baseUrl: fal.baseUrl, apiKey: KEY });
  });

  afterAll(async () => {
    await fal?.close();
  });

  it('draws each job a duration in its kind\'s range, the same sequence for the same seed', async () => {
    const expected = seededRandom(7);
    const clips = [];
    for (let i = 0; i < 5; i += 1) clips.push(await client.submit(VIDEO, { prompt: 'p', image_url: `data:image/jpeg;base64,${'A'.repeat(4000)}` }));
    const image = await client.submit(IMAGE, { prompt: 'p', image_url: 'data:image/jpeg;base64,AAAA' });
    const durations = fal.jobs.map((j) => j.durationMs);
    expect(durations.slice(0, 5)).toEqual(Array.from({ length: 5 }, () => drawLatency(expected, [60_000, 120_000])));
    expect(durations[5]).toBe(drawLatency(expected, [5_000, 15_000]));
    for (const d of durations.slice(0, 5)) expect(d).toBeGreaterThanOrEqual(60_000);
    for (const d of durations.slice(0, 5)) expect(d).toBeLessThanOrEqual(120_000);
    expect(new Set(durations).size).toBe(6);
    // a clip's data URI is not kept (runs of thousands of jobs), its keys are
    expect(fal.jobs[0].input.image_url).toBe('(4023 characters)');
    expect(clips).toHaveLength(5);
    expect(image.requestId).toBe(fal.jobs[5].requestId);
  });

  it('answers polls IN_QUEUE, then IN_PROGRESS with the percentage, then COMPLETED as its clock passes the job\'s time', async () => {
    const { requestId } = await client.submit(VIDEO, { prompt: 'walk through', image_url: 'data:image/jpeg;base64,AAAA' });
    const job = fal.jobs.find((j) => j.requestId === requestId);
    const duration = job?.durationMs as number;
    const start = clock;

    expect(await client.status(VIDEO, requestId)).toMatchObject({ status: 'IN_QUEUE', queuePosition: 10 });
    // half-way through the running part (the first tenth is the queue)
    clock = start + Math.round(duration * 0.55) + 10;
    const percent = (latencyPhase(clock - start, duration) as { percent: number }).percent;
    expect(percent).toBe(50);
    const running = await client.status(VIDEO, requestId);
    expect(running.status).toBe('IN_PROGRESS');
    expect(running.logs.at(-1)?.message).toBe('50% done');
    // not ready yet: the result is refused as fal refuses it
    await expect(client.result(VIDEO, requestId)).rejects.toThrow(/still in progress/);

    const provider = new FalImageToVideoProvider(client, VIDEO, { workDir: '/tmp', pollIntervalMs: 15_000, maxWaitMs: 60_000, expectedRunMs: 90_000 });
    const jobId = encodeFalJobId({ model: VIDEO, requestId, submittedAt: start });
    expect(await provider.status(jobId)).toMatchObject({ state: 'running', progress: 50 });
    expect(provider.pollIntervalMs).toBe(15_000);

    clock = start + duration;
    expect(await provider.status(jobId)).toMatchObject({ state: 'completed', progress: 100 });
    const output = await client.result(VIDEO, requestId);
    expect((output.video as { url: string }).url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/files\//);
    expect(job?.statusPolls).toBe(4);
    expect(fal.statusPolls()).toBeGreaterThanOrEqual(4);
  });

  it('places a job in its phase from the time since submission alone', () => {
    expect(latencyPhase(0, 100_000)).toEqual({ status: 'IN_QUEUE', queuePosition: 10 });
    expect(latencyPhase(5_000, 100_000)).toEqual({ status: 'IN_QUEUE', queuePosition: 5 });
    expect(latencyPhase(10_000, 100_000)).toEqual({ status: 'IN_PROGRESS', percent: 0 });
    expect(latencyPhase(99_999, 100_000)).toEqual({ status: 'IN_PROGRESS', percent: 99 });
    expect(latencyPhase(100_000, 100_000)).toEqual({ status: 'COMPLETED' });
    expect(() => drawLatency(() => 0.5, [10, 5])).toThrow(/not a range/);
  });
});

describe('capacity report arithmetic', () => {
  it('reads second ranges', () => {
    expect(parseSecondsRange('60-120', 'x')).toEqual([60_000, 120_000]);
    expect(parseSecondsRange(' 0.5 - 2 ', 'x')).toEqual([500, 2000]);
    expect(parseSecondsRange('7', 'x')).toEqual([7000, 7000]);
    expect(() => parseSecondsRange('120-60', 'CAPACITY_CLIP_SECONDS')).toThrow(/runs backwards/);
    expect(() => parseSecondsRange('soon', 'CAPACITY_CLIP_SECONDS')).toThrow(/CAPACITY_CLIP_SECONDS/);
  });

  it('charges memory growth over all workers to the jobs in flight, and throughput per minute of wall time', () => {
    // two workers: idle 600 + 620 MB, peak 700 + 740 MB: 220 MB over 1000 jobs
    expect(rssPerJobKb([600 * 1024, 620 * 1024], [700 * 1024, 740 * 1024], 1000)).toBeCloseTo(225.28, 5);
    expect(rssPerJobKb([500], [480], 10)).toBe(0);
    expect(rssPerJobKb([500], [600], 0)).toBe(0);
    expect(() => rssPerJobKb([1, 2], [3], 5)).toThrow();
    expect(throughputPerMinute(1000, 0, 150_000)).toBe(400);
    expect(throughputPerMinute(10, 5000, 5000)).toBe(0);
  });

  it('takes schedule-to-start and step times out of a history, and counts tasks per worker', () => {
    const events: HistoryEventLite[] = [
      { eventId: 1, timeMs: 1000, kind: 'other' },
      { eventId: 2, timeMs: 1000, kind: 'workflowTaskScheduled' },
      { eventId: 3, timeMs: 1040, kind: 'workflowTaskStarted', scheduledEventId: 2, identity: 'w1' },
      { eventId: 5, timeMs: 1100, kind: 'activityScheduled', activityType: 'checkClipVideo' },
      { eventId: 6, timeMs: 1350, kind: 'activityStarted', scheduledEventId: 5, identity: 'w2' },
      { eventId: 7, timeMs: 1400, kind: 'activityCompleted', scheduledEventId: 5 },
      { eventId: 8, timeMs: 16_400, kind: 'activityScheduled', activityType: 'checkClipVideo' },
      { eventId: 9, timeMs: 16_410, kind: 'activityStarted', scheduledEventId: 8, identity: 'w1' },
      { eventId: 10, timeMs: 16_500, kind: 'activityCompleted', scheduledEventId: 8 },
      // a started event whose scheduling is not in the history counts for its worker only
      { eventId: 12, timeMs: 17_000, kind: 'workflowTaskStarted', scheduledEventId: 99, identity: 'w2' },
    ];
    expect(scheduleToStart(events)).toEqual({ activityMs: [250, 10], workflowTaskMs: [40], tasksByWorker: { w1: 2, w2: 2 } });
    expect(activityDurations(events)).toEqual({ checkClipVideo: [300, 100] });
    expect(spread([30, 10, 20, 40])).toEqual({ count: 4, p50: 20, p95: 40, max: 40, mean: 25 });
    expect(spread([])).toEqual({ count: 0, p50: 0, p95: 0, max: 0, mean: 0 });
  });

  it('reads the SDK\'s Prometheus text and keeps the peak of a gauge', () => {
    const text = [
      '# HELP temporal_worker_task_slots_used Current number of worker slots in use',
      '# TYPE temporal_worker_task_slots_used gauge',
      'temporal_worker_task_slots_used{namespace="default",task_queue="render-studio-generation",worker_type="ActivityWorker"} 37',
      'temporal_worker_task_slots_used{namespace="default",task_queue="render-studio-media",worker_type="ActivityWorker"} 4',
      'temporal_worker_task_slots_used{namespace="default",task_queue="render-studio-media",worker_type="WorkflowWorker"} 1',
      'temporal_activity_schedule_to_start_latency_seconds_sum{task_queue="render-studio-generation"} 1.5',
    ].join('\n');
    const samples = parsePrometheus(text);
    expect(samples).toHaveLength(4);
    expect(metricSum(samples, 'temporal_worker_task_slots_used', { worker_type: 'ActivityWorker' })).toBe(41);
    expect(metricSum(samples, 'temporal_worker_task_slots_used', { task_queue: 'render-studio-media' })).toBe(5);
    expect(metricSum(samples, 'temporal_activity_schedule_to_start_latency_seconds_sum')).toBe(1.5);
    const peaks = new PeakTracker();
    for (const v of [3, 37, 12]) peaks.see('generation', v);
    peaks.see('media', Number.NaN);
    expect(peaks.get('generation')).toBe(37);
    expect(peaks.get('media')).toBe(0);
    expect(peaks.entries()).toEqual([['generation', 37]]);
  });

  it('counts an account charged once only with one consume row of the cost and a ledger that adds up', () => {
    const ok = { ok: true, balance: 1, ledgerSum: 1, reserved: 0 };
    const consumes = new Map([
      ['a', [-4]],
      ['b', [-4, -4]],
      ['c', [-4]],
    ]);
    const invariants = new Map([
      ['a', ok],
      ['b', ok],
      ['c', { ok: false, balance: 5, ledgerSum: 1, reserved: 0 }],
    ]);
    const check = checkCharges(['a', 'b', 'c', 'd'], consumes, invariants, 4);
    expect(check.chargedOnce).toBe(1);
    expect(check.problems).toEqual([
      'b: 2 consume row(s) [-4,-4]',
      'c: ledger {"ok":false,"balance":5,"ledgerSum":1,"reserved":0}',
      'd: 0 consume row(s) []',
      'd: ledger not checked',
    ]);
  });
});
