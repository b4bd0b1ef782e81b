import type { Knex } from 'knex';

/**
 * `lists.member_count`: how many members a list holds, kept by the list module in the same transaction as
 * every add and remove (the list row is locked for each), so reading a list or a page of its members no
 * longer counts its memberships. Existing lists are counted once here.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('lists', (t) => {
    t.integer('member_count').notNullable().defaultTo(0);
  });
  await knex.raw(`UPDATE lists l SET member_count = CASE l.kind
    WHEN 'people' THEN (SELECT count(*) FROM list_people m WHERE m.list_id = l.id)
    ELSE (SELECT count(*) FROM list_companies m WHERE m.list_id = l.id) END`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('lists', (t) => {
    t.dropColumn('member_count');
  });
}
