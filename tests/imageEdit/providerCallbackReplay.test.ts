/**
 * A hosted image edit's history recorded before provider callbacks (one media activity, `makeEditedImage`, that polled
 * fal inside; no `image-edit-provider-callback` marker) replays against today's code: edits running when a worker is
 * upgraded go on along their path. Re-record (only on the code from before the change!) with
 * `RECORD_REPLAY_FIXTURES=1 npx jest tests/imageEdit/providerCallbackReplay.test.ts`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { historyFromJSON, historyToJSON } from '@temporalio/common/lib/proto-utils';
import { temporal } from '@temporalio/proto';
import { loadConfig, type AppConfig } from '../../config/env';
import { imageEditWorkflowId } from '../../domain/imageEdit';
import { createProviders } from '../../providers';
import { startFakeFal, type FakeFal } from '../support/fakeFal';
import { closeTestKnex } from '../support/db';
import { replayWithCurrentCode } from '../support/temporal';
import { generateImage, startHarness, userWithRender, type Harness } from './harness';

type History = temporal.api.history.v1.IHistory;
const { EventType } = temporal.api.enums.v1;

const FIXTURE = path.join(__dirname, 'fixtures', 'imageEdit-hosted-polling.history.json');
const FIXTURE_WORKFLOW_ID = 'image-edit-hosted-polling-fixture';
const KEY = 'replay-fal-key';
const EDIT = 'fal-ai/nano-banana/edit';
const UPSCALE = 'fal-ai/esrgan';

function markers(history: History): string[] {
  return (history.events ?? [])
    .filter((event) => event.eventType === EventType.EVENT_TYPE_MARKER_RECORDED)
    .map((event) =>
      Object.values(event.markerRecordedEventAttributes?.details ?? {})
        .flatMap((payloads) => payloads.payloads ?? [])
        .map((payload) => Buffer.from(payload.data ?? []).toString('utf8'))
        .join(' '),
    );
}

function activityTypes(history: History): string[] {
  return (history.events ?? []).flatMap((e) => (e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes.activityType?.name ?? ''] : []));
}

describe('replaying a hosted image edit recorded before provider callbacks', () => {
  afterAll(async () => {
    await closeTestKnex();
  });

  if (process.env.RECORD_REPLAY_FIXTURES === '1') {
    it('records a hosted image edit that polls the provider inside its media activity', async () => {
      let fal: FakeFal | undefined;
      let h: Harness | undefined;
      try {
        fal = await startFakeFal({
          apiKey: KEY,
          models: { [EDIT]: { kind: 'image-edit', behaviour: 'succeed', queuedPolls: 1, runningPolls: 1 }, [UPSCALE]: { kind: 'upscale', behaviour: 'succeed', queuedPolls: 0, runningPolls: 1 } },
        });
        const hosted: Partial<AppConfig> = { providerKind: 'fal', falBaseUrl: fal.baseUrl, falApiKey: KEY, falImageEditModel: EDIT, falUpscaleModel: UPSCALE };
        h = await startHarness('replay-hosted', { providers: createProviders({ ...loadConfig(), ...hosted }, { imagePollIntervalMs: 20 }), config: hosted });
        const { user, renderId } = await userWithRender(h.baseUrl);
        const res = await generateImage(h.baseUrl, user, { baseImage: renderId, prompt: 'golden hour glow' });
        expect(res.status).toBe(200);
        const history = await h.client.workflow.getHandle(imageEditWorkflowId(res.body.metadata.jobId)).fetchHistory();
        fs.writeFileSync(FIXTURE, `${historyToJSON(history)}\n`);
      } finally {
        await h?.close();
        await fal?.close();
      }
    }, 120_000);
  }

  it('replays the recorded hosted history (one media activity polling fal) with the current workflow code', async () => {
    const history = historyFromJSON(JSON.parse(fs.readFileSync(FIXTURE, 'utf8')));
    const types = (history.events ?? []).map((event) => event.eventType);
    expect(types[0]).toBe(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED);
    expect(types.at(-1)).toBe(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED);
    expect(activityTypes(history)).toEqual(['makeEditedImage']);
    expect(markers(history).some((marker) => marker.includes('image-edit-provider-callback'))).toBe(false);
    const results = await replayWithCurrentCode([{ workflowId: FIXTURE_WORKFLOW_ID, history }]);
    expect(results.map((r) => ({ workflowId: r.workflowId, error: r.error }))).toEqual([{ workflowId: FIXTURE_WORKFLOW_ID, error: undefined }]);
  }, 60_000);
});
