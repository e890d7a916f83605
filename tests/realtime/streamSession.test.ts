/**
 * An event stream lasts only as long as its session (issue 31, item 1): sign-out, expiry, revocation, a password
 * change that ends the other sessions and account deletion each end it within seconds, with a `session-ended`
 * message, and its reconnect is refused with 401. The stream is served by one API process and the session ended
 * through another (or by the database directly), so only PostgreSQL's rs_auth_changed note can tell it.
 */
import { randomUUID } from 'node:crypto';
import { addCredits } from '../../services/billing/credits';
import { createSession } from '../../services/accounts/sessions';
import { createTestUser, type TestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { openEventStream, type OpenedEventStream } from '../support/eventStream';
import { request } from '../support/http';
import { signInAgain, startInstance, streamsStopped, type Instance } from './instances';
import { sessionIdForToken } from '../../services/accounts/sessions';
import { closeTemporalClient, getTemporalClient } from '../../services/platform/temporalClient';

/**
 * How long a test waits for a stream to be ended before failing: a bound that only turns a stream that is never ended
 * into a clear failure (a busy machine may take seconds), not a speed target.
 */
const ENDS_WITHIN_MS = 30_000;

const grant = (userId: string) =>
  addCredits(testKnex(), { workspaceId: userId, amount: 1, type: 'add', description: 'test grant', idempotencyKey: `grant:${randomUUID()}` });

describe('event streams end with their session', () => {
  let acting: Instance;
  let serving: Instance;
  const open: OpenedEventStream[] = [];

  const stream = async (token: string) => {
    const s = await openEventStream(serving.server.baseUrl, { token });
    open.push(s);
    expect(s.status).toBe(200);
    await s.next((m) => m.event === 'ready');
    return s;
  };

  /** The stream says its session ended and is closed by the server; a reconnect gets 401. */
  const expectEndedForSession = async (s: OpenedEventStream, token: string) => {
    const last = await s.next((m) => m.event === 'session-ended', ENDS_WITHIN_MS);
    expect(last.data).toEqual({ kind: 'session-ended' });
    let waited: NodeJS.Timeout | undefined;
    await Promise.race([s.ended, new Promise((_, reject) => (waited = setTimeout(() => reject(new Error('stream still open')), ENDS_WITHIN_MS)))]).finally(() =>
      clearTimeout(waited),
    );
    const again = await request(serving.server.baseUrl, '/api/events', { token });
    expect(again.status).toBe(401);
    expect(again.body).toEqual({ success: false, error: 'Authentication required' });
  };

  /** The stream is still open and live: it gets the user's next event. */
  const expectStillLive = async (s: OpenedEventStream, user: TestUser) => {
    await grant(user.id);
    expect((await s.next((m) => m.event === 'credits')).event).toBe('credits');
  };

  /** Sets the session's expiry `interval` from the database's now; the expiry set. */
  const setExpiry = async (token: string, interval: string): Promise<Date> => {
    const [row] = await testKnex()('sessions')
      .where({ id: sessionIdForToken(token) })
      .update({ expires_at: testKnex().raw(`now() + interval '${interval}'`) })
      .returning('expires_at');
    return new Date(row.expires_at);
  };

  /** Waits until the database's clock is past `at`: the moment has passed, whatever the machine's speed. */
  const untilPast = async (at: Date) => {
    for (;;) {
      const { rows } = await testKnex().raw('select now() > ? as past', [at]);
      if (rows[0].past) return;
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  beforeAll(async () => {
    acting = await startInstance({ taskQueue: `stream-session-${randomUUID()}` });
    serving = await startInstance();
  });

  afterEach(() => {
    for (const s of open.splice(0)) s.close();
  });

  afterAll(async () => {
    await acting?.close();
    await serving?.close();
    await closeTemporalClient();
    await closeTestKnex();
  });

  it('sign-out through another API process ends that session\'s stream, not the same user\'s other session', async () => {
    const user = await createTestUser(acting.server.baseUrl);
    const otherToken = await signInAgain(acting.server.baseUrl, user);
    const [signedOut, other] = [await stream(user.token), await stream(otherToken)];
    const before = await streamsStopped('session_ended');

    expect((await request(acting.server.baseUrl, '/api/auth/signout', { method: 'POST', token: user.token })).status).toBe(200);
    await expectEndedForSession(signedOut, user.token);
    expect(await streamsStopped('session_ended')).toBe(before + 1);
    await expectStillLive(other, { ...user, token: otherToken });
  });

  it('expiry ends the stream when the session expires, with nothing announced', async () => {
    const user = await createTestUser(acting.server.baseUrl);
    // opened on a session of a day (a busy machine may take seconds to open it), then given a short rest of life
    const { token } = await createSession(testKnex(), user.id, 1);
    const s = await stream(token);
    const expiresAt = await setExpiry(token, '1.5 seconds');
    await expectEndedForSession(s, token);
    // not before its expiry (the database's clock and this process's are the machine's)
    expect(Date.now()).toBeGreaterThanOrEqual(expiresAt.getTime() - 200);
  });

  it('a session made longer keeps its stream past the old expiry; it ends at the new one', async () => {
    const user = await createTestUser(acting.server.baseUrl);
    const { token } = await createSession(testKnex(), user.id, 1);
    const s = await stream(token);
    // an expiry a second away that the stream is armed for, then made a minute longer
    const old = await setExpiry(token, '1 second');
    await setExpiry(token, '60 seconds');
    // the old expiry has passed (the database's clock says so), the stream is still live
    await untilPast(old);
    await expectStillLive(s, user);
    // and it ends at the new one (brought near, so the test does not wait the minute)
    await setExpiry(token, '1 second');
    await expectEndedForSession(s, token);
  });

  it('revocation (the session row deleted by an operator, outside the API) ends the stream', async () => {
    const user = await createTestUser(acting.server.baseUrl);
    const s = await stream(user.token);
    await testKnex()('sessions').where({ id: sessionIdForToken(user.token) }).delete();
    await expectEndedForSession(s, user.token);
  });

  it('a password change ends the streams of the other sessions; the session that made it keeps its stream', async () => {
    const user = await createTestUser(acting.server.baseUrl);
    const otherToken = await signInAgain(acting.server.baseUrl, user);
    const [kept, ended] = [await stream(user.token), await stream(otherToken)];
    const newPassword = `new-${randomUUID().slice(0, 12)}-9`;
    const changed = await request(acting.server.baseUrl, '/api/profile/password', {
      token: user.token,
      json: { currentPassword: user.password, newPassword, confirmPassword: newPassword },
    });
    expect(changed.status).toBe(200);
    expect(changed.body.endedSessions).toBe(1);
    await expectEndedForSession(ended, otherToken);
    await expectStillLive(kept, user);
  });

  it('a change that leaves the session valid (a new name) keeps the stream open', async () => {
    const user = await createTestUser(acting.server.baseUrl);
    const s = await stream(user.token);
    expect((await request(acting.server.baseUrl, '/api/profile', { method: 'PATCH', token: user.token, json: { name: 'Renamed' } })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 300));
    await expectStillLive(s, user);
    expect(s.messages.some((m) => m.event === 'session-ended')).toBe(false);
  });

  it('account deletion ends every stream of the account at once', async () => {
    const user = await createTestUser(acting.server.baseUrl);
    const otherToken = await signInAgain(acting.server.baseUrl, user);
    const streams = [await stream(user.token), await stream(otherToken)];
    // no worker runs the deletion here: the API marks the account and ends its sessions before it waits for it
    const deletion = request(acting.server.baseUrl, '/api/account/delete', { token: user.token, json: { confirmEmail: user.email } });
    await expectEndedForSession(streams[0], user.token);
    await expectEndedForSession(streams[1], otherToken);
    const answered = await deletion;
    expect(answered.status).toBe(202);
    // nothing runs it here: the deletion workflow itself is tested in tests/accountData
    await (await getTemporalClient(acting.config)).workflow.getHandle(String(answered.body.workflowId)).terminate('test over');
  });
});
