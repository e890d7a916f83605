import { randomUUID } from 'node:crypto';
import knexFactory, { type Knex } from 'knex';
import { CheckViolationError, Model, ValidationError, type ModelClass } from 'objection';
import { connectDatabase, knexConfig } from '../../db/connection';
import * as models from '../../db/models';
import { Clip, CompiledVideo, Image, Project, Render } from '../../db/models';
import { closeTestKnex, testKnex } from '../support/db';
import { createPersonalWorkspace } from '../../services/workspaces/personalWorkspace';

const KNEX_TABLES = ['knex_migrations', 'knex_migrations_lock'];
/** Tables kept by a library in its own layout, with no model: rate-limiter-flexible's sign-in counters. */
const LIBRARY_TABLES = ['auth_rate_limits'];
const toColumn = (property: string): string => property.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

const exported: unknown[] = Object.values(models);
const modelClasses = exported.filter(
  (value): value is ModelClass<Model> => typeof value === 'function' && value.prototype instanceof Model && Boolean((value as typeof Model).tableName),
);

async function tables(knex: Knex): Promise<string[]> {
  const rows = await knex('information_schema.tables')
    .where({ table_schema: 'public', table_type: 'BASE TABLE' })
    .orderBy('table_name')
    .select<{ table_name: string }[]>('table_name');
  return rows.map((r) => r.table_name);
}

async function columns(knex: Knex, table: string): Promise<Map<string, string>> {
  const rows = await knex('information_schema.columns')
    .where({ table_schema: 'public', table_name: table })
    .select<{ column_name: string; data_type: string }[]>('column_name', 'data_type');
  return new Map(rows.map((r) => [r.column_name, r.data_type]));
}

async function createProfile(knex: Knex): Promise<string> {
  const email = `models-${randomUUID()}@example.com`;
  const [user] = await knex('users').insert({ email, password_hash: 'x' }).returning<{ id: string }[]>('id');
  await createPersonalWorkspace(knex, { id: user.id, email });
  await knex('profiles').where({ id: user.id }).update({ credits: 5 });
  return user.id;
}

function constraintOf(err: unknown): string | undefined {
  return (err as { constraint?: string }).constraint;
}

afterAll(closeTestKnex);

describe('objection models', () => {
  it('are bound to the pool connectDatabase opens, as the API and worker use them', async () => {
    const knex = connectDatabase(process.env.DATABASE_URL ?? '', { min: 0, max: 1 });
    try {
      expect(Model.knex()).toBe(knex);
      await expect(Project.query().limit(1)).resolves.toEqual(expect.any(Array));
    } finally {
      await knex.destroy();
    }
  });

  it('has one model per table of the schema, with the table name it maps', async () => {
    const schemaTables = (await tables(testKnex())).filter((t) => !KNEX_TABLES.includes(t) && !LIBRARY_TABLES.includes(t));
    const modelTables = modelClasses.map((m) => m.tableName).sort();

    expect(schemaTables.length).toBeGreaterThanOrEqual(21);
    expect(modelTables).toEqual([...new Set(modelTables)]);
    expect(modelTables).toEqual(schemaTables);
  });

  it('validates only properties that are columns, and declares exactly the jsonb columns as json attributes', async () => {
    for (const model of modelClasses) {
      const cols = await columns(testKnex(), model.tableName);
      const schemaColumns = Object.keys(model.jsonSchema?.properties ?? {}).map(toColumn);
      const jsonbColumns = [...cols].filter(([, type]) => type === 'jsonb').map(([name]) => name).sort();

      expect({ table: model.tableName, unknown: schemaColumns.filter((c) => !cols.has(c)) }).toEqual({ table: model.tableName, unknown: [] });
      if (model.prototype instanceof models.BaseModel) {
        expect({ table: model.tableName, json: model.jsonAttributes.map(toColumn).sort() }).toEqual({ table: model.tableName, json: jsonbColumns });
      }
    }
  });

  it('round-trips camelCase properties, jsonb objects, uuid[] arrays and bigint / numeric values', async () => {
    const knex = testKnex();
    const workspaceId = await createProfile(knex);
    const project = await Project.query(knex).insert({ workspaceId, name: 'Round trip' });
    const render = await Render.query(knex).insert({ projectId: project.id, workspaceId, fileUrl: 'renders/a.jpg', fileName: 'a.jpg', fileSize: 1234567 });
    const clip = await Clip.query(knex).insert({
      projectId: project.id,
      workspaceId,
      renderId: render.id,
      fileUrl: 'clips/a.mp4',
      fileName: 'a.mp4',
      duration: 5,
      analysisData: { motion: 'Drone Shot', scores: [1, 2] },
    });
    await CompiledVideo.query(knex).insert({ projectId: project.id, workspaceId, fileUrl: 'videos/v.mp4', fileName: 'v.mp4', clipIds: [clip.id] });

    const loaded = await Project.query(knex).findById(project.id).withGraphFetched('[renders.clips, compiledVideos]');

    expect(loaded?.renders?.[0]).toMatchObject({ id: render.id, fileSize: 1234567, aspectRatio: '16:9' });
    expect(loaded?.renders?.[0].clips?.[0]).toMatchObject({ duration: 5, analysisData: { motion: 'Drone Shot', scores: [1, 2] } });
    expect(loaded?.compiledVideos?.[0].clipIds).toEqual([clip.id]);
    expect(loaded?.createdAt).toBeInstanceOf(Date);
  });

  it('touches updatedAt on patch', async () => {
    const knex = testKnex();
    const project = await Project.query(knex).insert({ workspaceId: await createProfile(knex), name: 'Before' });
    await knex('projects').where({ id: project.id }).update({ updated_at: new Date('2020-01-01T00:00:00Z') });

    await Project.query(knex).findById(project.id).patch({ name: 'After' });

    const patched = await Project.query(knex).findById(project.id);
    expect(patched?.name).toBe('After');
    expect(patched?.updatedAt.getTime()).toBeGreaterThan(new Date('2021-01-01').getTime());
  });

  it('refuses bad input before it reaches the database', async () => {
    const knex = testKnex();
    await expect(Project.query(knex).insert({ workspaceId: randomUUID(), name: '   ' })).rejects.toBeInstanceOf(ValidationError);
    await expect(Project.query(knex).insert({ workspaceId: 'not-a-uuid', name: 'x' })).rejects.toBeInstanceOf(ValidationError);
    await expect(Image.query(knex).insert({ projectId: randomUUID(), workspaceId: randomUUID(), fileUrl: 'x', fileName: 'x', fileSize: -1 })).rejects.toBeInstanceOf(
      ValidationError,
    );
  });
});

describe('check constraints', () => {
  it('refuses a clip made from both a render and an image', async () => {
    const knex = testKnex();
    const workspaceId = await createProfile(knex);
    const project = await Project.query(knex).insert({ workspaceId, name: 'Constraints' });
    const render = await Render.query(knex).insert({ projectId: project.id, workspaceId, fileUrl: 'r', fileName: 'r.jpg' });
    const image = await Image.query(knex).insert({ projectId: project.id, workspaceId, fileUrl: 'i', fileName: 'i.png' });
    const base = { projectId: project.id, workspaceId, fileUrl: 'c', fileName: 'c.mp4' };

    const both = await Clip.query(knex).insert({ ...base, renderId: render.id, imageId: image.id }).catch((e: unknown) => e);

    expect(both).toBeInstanceOf(CheckViolationError);
    expect(constraintOf(both)).toBe('clips_single_source');
    await expect(Clip.query(knex).insert({ ...base, renderId: render.id }).returning('*')).resolves.toMatchObject({ renderId: render.id, imageId: null });
    await expect(Clip.query(knex).insert({ ...base, imageId: image.id })).resolves.toMatchObject({ imageId: image.id });
  });

  it('refuses negative credits and negative reserved credits', async () => {
    const knex = testKnex();
    const workspaceId = await createProfile(knex);

    const negative = await knex('profiles').where({ id: workspaceId }).update({ credits: -1 }).catch((e: unknown) => e);
    const negativeReserved = await knex('profiles').where({ id: workspaceId }).update({ reserved_credits: -1 }).catch((e: unknown) => e);

    expect(constraintOf(negative)).toBe('profiles_credits_not_negative');
    expect(constraintOf(negativeReserved)).toBe('profiles_reserved_not_negative');
    expect(await knex('profiles').where({ id: workspaceId }).first('credits', 'reserved_credits')).toEqual({ credits: 5, reserved_credits: 0 });
  });

  it('refuses reserving more than the credits held', async () => {
    const knex = testKnex();
    const workspaceId = await createProfile(knex);

    const over = await knex('profiles').where({ id: workspaceId }).update({ reserved_credits: 6 }).catch((e: unknown) => e);

    expect(constraintOf(over)).toBe('profiles_reserved_within_credits');
    await expect(knex('profiles').where({ id: workspaceId }).update({ reserved_credits: 5 })).resolves.toBe(1);
  });
});

describe('migrations', () => {
  const adminUrl = (() => {
    const url = new URL(process.env.DATABASE_URL ?? 'postgres://invalid');
    url.pathname = '/postgres';
    return url.toString();
  })();
  const database = `rs_migrations_${Date.now()}_${process.pid}`;
  let admin: Knex;
  let knex: Knex | null = null;

  beforeAll(async () => {
    admin = knexFactory({ client: 'pg', connection: adminUrl, pool: { min: 0, max: 1 } });
    await admin.raw(`create database "${database}"`);
  });

  afterAll(async () => {
    if (knex) await knex.destroy();
    await admin.raw(`drop database if exists "${database}" with (force)`);
    await admin.destroy();
  });

  it('roll all the way down and up again on a database of their own', async () => {
    const url = new URL(adminUrl);
    url.pathname = `/${database}`;
    knex = knexFactory(knexConfig(url.toString(), { min: 0, max: 2 }));

    const [, applied] = await knex.migrate.latest();
    const upTables = await tables(knex);
    const [, undone] = await knex.migrate.rollback(undefined, true);
    const downTables = await tables(knex);
    const [, reapplied] = await knex.migrate.latest();

    expect(applied.length).toBeGreaterThanOrEqual(5);
    expect(undone).toHaveLength(applied.length);
    expect(downTables).toEqual(KNEX_TABLES);
    expect(reapplied).toEqual(applied);
    expect(await tables(knex)).toEqual(upTables);
    expect(upTables).toEqual(await tables(testKnex()));
  });
});
