import type { Knex } from 'knex';

/**
 * An upload's claim on the object it is about to store (services/content/uploadIntents.ts): written before the object
 * is put, removed in the transaction that records the render (or once a refused upload's object is removed). What a
 * process killed between the put and the row leaves is one of these with its object: the invariant checker counts the
 * object as claimed, and the abandoned-upload sweep removes both within minutes (issue 41 item 8).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('upload_intents', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('bucket').notNullable();
    t.text('path').notNullable();
    // the workspace whose folder the object is in (no foreign key: the sweep removes what a deleted workspace left)
    t.uuid('workspace_id').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    // when the object became visible (the put finished): the sweep counts its age from here
    t.timestamp('stored_at', { useTz: true });
    t.unique(['bucket', 'path']);
    t.index(['stored_at']);
    t.index(['created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('upload_intents');
}
