import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { historyFromJSON, historyToJSON } from '@temporalio/common/lib/proto-utils';
import { temporal } from '@temporalio/proto';
import { Worker, type ReplayWorkerOptions } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { createOnboardingActivities } from '../../activities/onboarding';
import { runTryItOnboarding } from '../../services/accounts/onboarding';
import { onboardingWorkflowId } from '../../workflows';
import { closeTestKnex, testKnex } from '../support/db';
import { replayWithCurrentCode, testClient, uniqueTaskQueue, withWorker } from '../support/temporal';
import { createPersonalWorkspace } from '../../services/workspaces/personalWorkspace';

type History = temporal.api.history.v1.IHistory;
const { EventType } = temporal.api.enums.v1;

/**
 * Histories recorded from real runs and kept in git: replaying them against today's workflow code proves a
 * change is safe for workflows still running in production. Re-record (only after an intended, versioned
 * change) with `RECORD_REPLAY_FIXTURES=1 npx jest tests/temporal/replay.test.ts`.
 */
const FIXTURE = path.join(__dirname, 'fixtures', 'tryItOnboarding.history.json');
const FIXTURE_WORKFLOW_ID = 'onboarding-fixture';

function eventTypes(history: History): (temporal.api.enums.v1.EventType | null | undefined)[] {
  return (history.events ?? []).map((event) => event.eventType);
}

describe('replaying recorded onboarding histories', () => {
  let client: Client;
  let closeClient: () => Promise<void>;

  beforeAll(async () => {
    ({ client, close: closeClient } = await testClient());
  });

  afterAll(async () => {
    await closeClient();
    await closeTestKnex();
  });

  async function recordOnboardingHistory(): Promise<{ workflowId: string; history: History }> {
    const knex = testKnex();
    const email = `replay-${randomUUID()}@example.com`;
    const [user] = await knex('users').insert({ email, password_hash: 'scrypt$test' }).returning<{ id: string }[]>('id');
    await createPersonalWorkspace(knex, { id: user.id, email });
    const taskQueue = uniqueTaskQueue('replay');
    const activities = createOnboardingActivities({ knex });
    const result = await withWorker({ taskQueue, activities }, () =>
      runTryItOnboarding(client, { userId: user.id, fileName: 'replay_house.jpg', platform: 'Square', effect: 'Pan Left' }, taskQueue),
    );
    expect(result.success).toBe(true);
    const workflowId = onboardingWorkflowId(user.id);
    return { workflowId, history: await client.workflow.getHandle(workflowId).fetchHistory() };
  }

  it('replays a history recorded just now without a determinism error', async () => {
    const recorded = await recordOnboardingHistory();
    if (process.env.RECORD_REPLAY_FIXTURES === '1') fs.writeFileSync(FIXTURE, `${historyToJSON(recorded.history)}\n`);

    expect(eventTypes(recorded.history)).toContain(EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED);
    const results = await replayWithCurrentCode([recorded]);
    expect(results).toHaveLength(1);
    expect(results[0].error).toBeUndefined();
  });

  it('replays the committed fixture with the current workflow code', async () => {
    if (!fs.existsSync(FIXTURE)) throw new Error(`missing ${FIXTURE}: record it with RECORD_REPLAY_FIXTURES=1`);
    const history = historyFromJSON(JSON.parse(fs.readFileSync(FIXTURE, 'utf8')));

    const types = eventTypes(history);
    expect(types[0]).toBe(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED);
    expect(types.at(-1)).toBe(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED);
    const results = await replayWithCurrentCode([{ workflowId: FIXTURE_WORKFLOW_ID, history }]);
    expect(results.map((r) => ({ workflowId: r.workflowId, error: r.error }))).toEqual([{ workflowId: FIXTURE_WORKFLOW_ID, error: undefined }]);
  });

  it('reports a determinism violation when the workflow code changes its steps', async () => {
    const history = historyFromJSON(JSON.parse(fs.readFileSync(FIXTURE, 'utf8')));
    const changedCode: ReplayWorkerOptions = { workflowsPath: require.resolve('./workflows/reorderedTryItOnboarding') };

    await expect(Worker.runReplayHistory(changedCode, history, FIXTURE_WORKFLOW_ID)).rejects.toBeInstanceOf(DeterminismViolationError);
  });
});
