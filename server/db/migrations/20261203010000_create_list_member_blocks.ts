import type { Knex } from 'knex';

/**
 * `list_member_blocks`: each list's member order, (added_at, member id), cut into consecutive blocks of about
 * 1,000 members with their counts, so that a page by offset (`skip`) starts at the block that holds it instead
 * of walking every member before it. A block holds the members from its first key (inclusive) up to the next
 * block's (exclusive); a list's first block starts at ('-infinity', nil uuid), before every member, and a
 * list without members has none. The list module keeps the counts in the same transaction as every add and
 * remove. Existing lists are cut here, with this migration's own SQL (the module's may change; this must not).
 */
const BLOCK_SIZE = 1000;
const NIL = '00000000-0000-0000-0000-000000000000';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('list_member_blocks', (t) => {
    t.uuid('list_id').notNullable().references('lists.id').onDelete('CASCADE');
    t.timestamp('first_added_at', { useTz: true, precision: 3 }).notNullable();
    t.uuid('first_member_id').notNullable();
    t.integer('member_count').notNullable();
    t.primary(['list_id', 'first_added_at', 'first_member_id']);
  });
  // Every BLOCK_SIZE-th member of a list starts a block, its first member the list's first block; a list
  // without members has no blocks.
  for (const [table, column] of [
    ['list_people', 'person_id'],
    ['list_companies', 'company_id'],
  ]) {
    await knex.raw(
      `INSERT INTO list_member_blocks (list_id, first_added_at, first_member_id, member_count)
       SELECT list_id, CASE WHEN i = 0 THEN '-infinity' ELSE added_at END, CASE WHEN i = 0 THEN ?::uuid ELSE member_id END, least(?, n - i)
         FROM (SELECT list_id, added_at, ?? AS member_id, row_number() OVER (PARTITION BY list_id ORDER BY added_at, ??) - 1 AS i,
                      count(*) OVER (PARTITION BY list_id) AS n
                 FROM ??) m
        WHERE i % ? = 0`,
      [NIL, BLOCK_SIZE, column, column, table, BLOCK_SIZE],
    );
  }
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('list_member_blocks');
}
