import type { Knex } from 'knex';
import { closeTestKnex, testKnex } from '../support/db';
import type { TestServer } from '../support/http';
import { createContentServices, type ContentServices } from '../../services/content/contentServices';
import { ContentLibraryService } from '../../services/content/library';
import { logger } from '../../config/logger';
import type { TestUser } from '../support/accounts';
import { createProject, newUser, startProjectsApp } from './fixtures';

// The listing reuse must never keep a listing read before a change this process has announced (invalidate): the
// read may have seen the tables before the change, and keeping it would show the old listing for the reuse's 5 s.
let server: TestServer;
let knex: Knex;
let user: TestUser;
let services: ContentServices;

beforeAll(async () => {
  const app = await startProjectsApp();
  server = app.server;
  knex = testKnex();
  user = await newUser(server.baseUrl);
  // a library of its own (its own cache), on the same database and storage as the app
  services = createContentServices({ config: app.config, logger });
});

afterAll(async () => {
  await server.close();
  await closeTestKnex();
});

function imageRow(projectId: string, name: string): Record<string, unknown> {
  return { project_id: projectId, workspace_id: user.id, file_url: `/api/files/images/${user.id}/${name}.png`, file_name: name };
}

const names = (body: Buffer) => (JSON.parse(body.toString('utf8')) as { content: Array<{ data: { file_name: string } }> }).content.map((i) => i.data.file_name);

/** Counts the statements that read a content table while `run` runs (the five listing reads are one batch). */
async function tableReads<T>(run: () => Promise<T>): Promise<{ result: T; reads: number }> {
  let reads = 0;
  const onQuery = (q: { sql: string }) => {
    if (/from "(renders|images|clips|compiled_videos|generated_content)"/.test(q.sql)) reads += 1;
  };
  knex.client.on('query', onQuery);
  try {
    return { result: await run(), reads };
  } finally {
    knex.client.removeListener('query', onQuery);
  }
}

describe('the listing reuse and invalidation', () => {
  it('answers requests that miss the cache together from one read of the tables', async () => {
    const { library } = services;
    const project = await createProject(server.baseUrl, user, 'Together');
    await knex('images').insert(imageRow(project.id, 'first'));
    const { result, reads } = await tableReads(() => Promise.all(Array.from({ length: 8 }, () => library.listingJson(user.id, project.id, false))));
    expect(new Set(result).size).toBe(1); // the very same bytes
    expect(names(result[0])).toEqual(['first']);
    expect(reads).toBe(5); // one read of each of the five tables, not eight
    const pages = await tableReads(() => Promise.all(Array.from({ length: 8 }, () => library.pageJson(user.id, project.id, { limit: 10, after: null, fresh: false }))));
    expect(new Set(pages.result).size).toBe(1);
    expect(pages.reads).toBe(5);
    // ?refresh reads for itself
    const fresh = await tableReads(() => Promise.all([library.listingJson(user.id, project.id, true), library.listingJson(user.id, project.id, true)]));
    expect(fresh.reads).toBe(10);
  });

  it('does not keep a whole listing whose read overlapped an invalidate', async () => {
    const { library } = services;
    const project = await createProject(server.baseUrl, user, 'Overlap');
    await knex('images').insert(imageRow(project.id, 'first'));
    const reading = library.listingJson(user.id, project.id, false);
    // the change is announced while the read is under way
    library.invalidate(project.id);
    expect(names(await reading)).toEqual(['first']);
    // written behind the library's back: only a listing read afresh can show it
    await knex('images').insert(imageRow(project.id, 'second'));
    expect((names(await library.listingJson(user.id, project.id, false))).sort()).toEqual(['first', 'second']);
  });

  it('keeps a listing read with no invalidate meanwhile (the reuse still works)', async () => {
    // on a clock that stands still: a stalled machine must not see the 5 s reuse run out between the two requests
    const library = new ContentLibraryService({ storage: services.storage, projects: services.projects, now: () => 0 });
    const project = await createProject(server.baseUrl, user, 'Kept');
    await knex('images').insert(imageRow(project.id, 'first'));
    expect(names(await library.listingJson(user.id, project.id, false))).toEqual(['first']);
    await knex('images').insert(imageRow(project.id, 'second'));
    expect(names(await library.listingJson(user.id, project.id, false))).toEqual(['first']);
  });

  it('does not keep a first page whose read overlapped an invalidate', async () => {
    const { library } = services;
    const project = await createProject(server.baseUrl, user, 'Overlap page');
    await knex('images').insert(imageRow(project.id, 'first'));
    const reading = library.pageJson(user.id, project.id, { limit: 10, after: null, fresh: false });
    library.invalidate(project.id);
    expect(names(await reading)).toEqual(['first']);
    await knex('images').insert(imageRow(project.id, 'second'));
    expect(names(await library.pageJson(user.id, project.id, { limit: 10, after: null, fresh: false })).sort()).toEqual(['first', 'second']);
  });
});

describe('refresh-ahead: a listing in steady use is re-read before its reuse runs out', () => {
  // a library on a clock of the test's own: 5 s reuse, refresh-ahead past 60 % of it
  let clock = 0;
  const library = () => new ContentLibraryService({ storage: services.storage, projects: services.projects, cacheTtlMs: 5000, now: () => clock });

  /**
   * Holds every read of the tables `lib` makes (`method`: its listing or page read) until `release` is called, and
   * hands out each held read's body: the test, not the speed of the database, decides when a background read ends.
   * Each request's ownership check is a query of its own, so without this a request of a concurrent batch whose check
   * came back after the background read had finished was answered with the new body.
   */
  function holdReads(lib: ContentLibraryService, method: 'listingBody' | 'pageBody') {
    const target = lib as unknown as Record<typeof method, (...args: unknown[]) => Promise<Buffer>>;
    const original = target[method].bind(lib);
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const started: Array<Promise<Buffer>> = [];
    const spy = jest.spyOn(target, method).mockImplementation((...args: unknown[]) => {
      const body = gate.then(() => original(...args));
      started.push(body);
      return body;
    });
    return {
      spy,
      started,
      release: () => {
        open();
        spy.mockRestore();
      },
    };
  }

  it.each([
    ['the whole listing', 'listingBody' as const, (lib: ContentLibraryService, projectId: string) => lib.listingJson(user.id, projectId, false)],
    ['the first page', 'pageBody' as const, (lib: ContentLibraryService, projectId: string) => lib.pageJson(user.id, projectId, { limit: 10, after: null, fresh: false })],
  ])('%s: answered from the reuse while one background read replaces it', async (_what, method, ask) => {
    const lib = library();
    clock = 0;
    const project = await createProject(server.baseUrl, user, 'Ahead');
    await knex('images').insert(imageRow(project.id, 'first'));
    expect(names(await ask(lib, project.id))).toEqual(['first']);
    await knex('images').insert(imageRow(project.id, 'second'));
    // within the first 60 %: plain reuse, no read
    clock = 2900;
    const early = await tableReads(() => ask(lib, project.id));
    expect(names(early.result)).toEqual(['first']);
    expect(early.reads).toBe(0);
    // past it: still the kept body, at once (the background read is held until all six are answered), and one
    // background read for all the requests
    clock = 3100;
    const held = holdReads(lib, method);
    const late = await tableReads(() => Promise.all(Array.from({ length: 6 }, () => ask(lib, project.id))));
    for (const body of late.result) expect(names(body)).toEqual(['first']);
    expect(late.reads).toBe(0);
    expect(held.spy).toHaveBeenCalledTimes(1);
    // the read replaces the kept body before the reuse runs out (the clock never reaches 5 s)
    const replaced = await tableReads(async () => {
      held.release();
      await Promise.all(held.started);
      return names(await ask(lib, project.id)).sort();
    });
    expect(replaced.result).toEqual(['first', 'second']);
    expect(replaced.reads).toBe(5);
    // and the new body is reused from when it was read: no read again until past 60 % of its own period
    clock = 3100 + 2900;
    expect((await tableReads(() => ask(lib, project.id))).reads).toBe(0);
  });

  it('does not keep a background read that overlapped an invalidate', async () => {
    const lib = library();
    clock = 0;
    const project = await createProject(server.baseUrl, user, 'Ahead overlap');
    await knex('images').insert(imageRow(project.id, 'first'));
    await lib.listingJson(user.id, project.id, false);
    clock = 3100;
    // the answer (the kept body) starts the background read; the change is announced while it is under way
    expect(names(await lib.listingJson(user.id, project.id, false))).toEqual(['first']);
    lib.invalidate(project.id);
    await knex('images').insert(imageRow(project.id, 'second'));
    // whatever the marked read saw, it was not kept: the next answer is read afresh and shows the change
    expect(names(await lib.listingJson(user.id, project.id, false)).sort()).toEqual(['first', 'second']);
  });
});
