/**
 * What one account can hold open on the realtime channel (issue 31, item 2): at most EVENT_STREAMS_PER_ACCOUNT
 * streams over every API process (the next is refused with 429), and a reader that stops reading is dropped once
 * EVENT_STREAM_MAX_QUEUED_BYTES wait for it, then replays what it missed from its Last-Event-ID.
 */
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { tooManyStreamsMessage } from '../../api/routes/events';
import { EVENTS_CHANNEL } from '../../services/platform/events';
import { createTestUser } from '../support/accounts';
import { closeTestKnex, testKnex } from '../support/db';
import { openEventStream, type OpenedEventStream } from '../support/eventStream';
import { startInstance, streamsStopped, waitFor, type Instance } from './instances';

const LIMIT = 3;
const MAX_QUEUED_BYTES = 64 * 1024;

/** `count` events of about 6 kB each for the user, in one statement as publishEvent writes them (row + NOTIFY). */
async function publishBulk(userId: string, count: number): Promise<void> {
  await testKnex().raw(
    `with e as (
       insert into user_events (workspace_id, payload)
       select ?, jsonb_build_object('kind', 'content', 'change', 'updated', 'contentKind', 'render', 'itemId', n::text, 'note', repeat('x', 6000))
       from generate_series(1, ?) n
       returning id, workspace_id, payload)
     select pg_notify(?, json_build_object('id', e.id::text, 'userId', e.workspace_id, 'event', e.payload)::text) from (select * from e order by id) e`,
    [userId, count, EVENTS_CHANNEL],
  );
}

describe('event stream limits', () => {
  let one: Instance;
  let two: Instance;
  const open: OpenedEventStream[] = [];
  const stream = async (instance: Instance, token: string, lastEventId?: string) => {
    const s = await openEventStream(instance.server.baseUrl, { token, lastEventId });
    open.push(s);
    return s;
  };
  const ready = async (instance: Instance, token: string) => {
    const s = await stream(instance, token);
    expect(s.status).toBe(200);
    await s.next((m) => m.event === 'ready');
    return s;
  };

  beforeAll(async () => {
    const config = { eventStreamsPerAccount: LIMIT, eventStreamMaxQueuedBytes: MAX_QUEUED_BYTES };
    one = await startInstance({ config });
    two = await startInstance({ config });
  });

  afterEach(() => {
    for (const s of open.splice(0)) s.close();
  });

  afterAll(async () => {
    await one?.close();
    await two?.close();
    await closeTestKnex();
  });

  it('refuses a stream past the account limit with 429 in every API process; a freed slot can be used again', async () => {
    const user = await createTestUser(one.server.baseUrl);
    const other = await createTestUser(one.server.baseUrl);
    const held = [await ready(one, user.token), await ready(one, user.token), await ready(two, user.token)];
    const refusedBefore = await streamsStopped('limit');

    for (const instance of [two, one]) {
      const refused = await stream(instance, user.token);
      expect(refused.status).toBe(429);
      expect(refused.headers['retry-after']).toBe('30');
      await refused.ended;
      expect(JSON.parse(refused.text())).toEqual({ success: false, error: tooManyStreamsMessage(LIMIT), code: 'TOO_MANY_EVENT_STREAMS' });
    }
    expect(tooManyStreamsMessage(LIMIT)).toBe(
      'Too many live update streams are open for this account (at most 3). Close a Render Studio tab or window, or try again later.',
    );
    expect(await streamsStopped('limit')).toBe(refusedBefore + 2);
    // another account is not counted with this one
    await ready(two, other.token);

    // a closed stream gives its slot back (to whichever process asks next)
    held[0].close();
    let reopened: OpenedEventStream | null = null;
    await waitFor(async () => {
      const s = await stream(two, user.token);
      if (s.status === 200) reopened = s;
      else await s.ended;
      return s.status === 200;
    });
    expect(reopened).not.toBeNull();
    expect((await stream(one, user.token)).status).toBe(429);
  });

  it('gives back the slot of a reader that leaves while its stream is being set up (a tab closed at once)', async () => {
    const user = await createTestUser(one.server.baseUrl);
    const realSubscribe = one.hub.subscribe;
    let entered!: () => void;
    const inSubscribe = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    // the route is held inside its subscribe until the reader has gone, so the reader's close comes before the stream starts
    const spy = jest.spyOn(one.hub, 'subscribe').mockImplementationOnce(async (...args) => {
      entered();
      await gate;
      return realSubscribe(...args);
    });
    try {
      const url = new URL('/api/events', one.server.baseUrl);
      const req = http.get(url, { headers: { cookie: `rs_session=${user.token}`, accept: 'text/event-stream' } });
      req.on('error', () => undefined);
      await inSubscribe;
      const gone = new Promise((resolve) => req.on('close', resolve));
      req.destroy();
      await gone;
      // the server shares this process's event loop: its side of the socket closes within a few turns
      await new Promise((resolve) => setTimeout(resolve, 100));
      release();
      await waitFor(() => one.hub.clientCount() === 0);
    } finally {
      spy.mockRestore();
    }
    for (let i = 0; i < LIMIT; i += 1) await ready(one, user.token);
  });

  it('gives back the slots of a process whose LISTEN connection dies (a crashed API process)', async () => {
    const user = await createTestUser(one.server.baseUrl);
    const onOne = [await ready(one, user.token), await ready(one, user.token), await ready(one, user.token)];
    expect((await stream(two, user.token)).status).toBe(429);
    await testKnex().raw('select pg_terminate_backend(pid) from pg_stat_activity where application_name = ?', [one.name]);
    await Promise.all(onOne.map((s) => s.ended));
    for (let i = 0; i < LIMIT; i += 1) await ready(two, user.token);
  });

  it('drops a reader that stops reading once its queue passes the bound, and replays what it missed from Last-Event-ID', async () => {
    const user = await createTestUser(one.server.baseUrl);
    const slow = await ready(one, user.token);
    const droppedBefore = await streamsStopped('slow_reader');
    const earlier = await testKnex()('user_events').where({ workspace_id: user.id }).max<{ id: string | null }>('id as id').first();
    slow.pause();

    // the socket buffers take a few MB first; then the stream's own queue grows past 64 kB and it is dropped
    for (let batch = 0; batch < 60 && (await streamsStopped('slow_reader')) === droppedBefore; batch += 1) {
      await publishBulk(user.id, 100);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(await streamsStopped('slow_reader')).toBe(droppedBefore + 1);
    await waitFor(() => one.hub.clientCount() === 0);

    slow.resume();
    await slow.ended;
    const published = (await testKnex()('user_events').where({ workspace_id: user.id }).andWhere('id', '>', earlier?.id ?? 0).orderBy('id').select('id')).map((r: { id: string }) => String(r.id));
    const received = slow.messages.filter((m) => m.id !== null).map((m) => String(m.id));
    // what arrived is the oldest part, in order, without gaps; the rest was thrown away with the connection
    expect(received).toEqual(published.slice(0, received.length));
    const missed = published.slice(received.length);
    expect(missed.length).toBeGreaterThan(0);

    // back, it is sent what it missed (paced by its socket, not dropped though the replay passes the bound), then goes live
    const back = await stream(two, user.token, received[received.length - 1]);
    expect(back.status).toBe(200);
    const replayed: string[] = [];
    for (let i = 0; i < missed.length; i += 1) replayed.push(String((await back.next()).id));
    expect(replayed).toEqual(missed);
    expect((await back.next()).data).toEqual({ resumed: true });
    expect(await streamsStopped('slow_reader')).toBe(droppedBefore + 1);
    const note = randomUUID();
    await testKnex().raw(
      `with e as (insert into user_events (workspace_id, payload) values (?, jsonb_build_object('kind', 'content', 'change', 'updated', 'contentKind', 'render', 'itemId', ?::text)) returning id, workspace_id, payload)
       select pg_notify(?, json_build_object('id', e.id::text, 'userId', e.workspace_id, 'event', e.payload)::text) from e`,
      [user.id, note, EVENTS_CHANNEL],
    );
    expect((await back.next()).data).toMatchObject({ itemId: note });
  });
});
