/**
 * Test-only workflows for the time-skipping server: the shape of the approval deadline (wait for a decision
 * or a deadline of days) and a plain long timer. Deterministic: Date.now() is workflow time here.
 */
import type { Duration } from '@temporalio/common';
import { condition, defineSignal, setHandler, sleep } from '@temporalio/workflow';

export type Decision = 'approved' | 'rejected';
export type DeadlineOutcome = Decision | 'expired';

export interface TimedOutcome<T> {
  outcome: T;
  startedAtMs: number;
  endedAtMs: number;
}

export const decideSignal = defineSignal<[Decision]>('decide');

export async function decisionOrDeadlineWorkflow(deadline: Duration): Promise<TimedOutcome<DeadlineOutcome>> {
  let decision: Decision | null = null;
  setHandler(decideSignal, (value) => {
    decision ??= value;
  });
  const startedAtMs = Date.now();
  const decided = await condition(() => decision !== null, deadline);
  return { outcome: decided && decision ? decision : 'expired', startedAtMs, endedAtMs: Date.now() };
}

export async function longTimerWorkflow(duration: Duration): Promise<TimedOutcome<'slept'>> {
  const startedAtMs = Date.now();
  await sleep(duration);
  return { outcome: 'slept', startedAtMs, endedAtMs: Date.now() };
}
