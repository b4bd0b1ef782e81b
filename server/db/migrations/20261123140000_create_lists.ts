import type { Knex } from 'knex';

/**
 * People lists and company lists of a workspace, and their members (lead-database ids). Deleting a
 * list deletes its memberships, never the people or companies. Members are read and exported in the
 * order they were added, through the (list_id, added_at, member id) indexes.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('lists', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    /** people | company */
    t.text('kind').notNullable();
    t.text('name').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
    t.index(['workspace_id', 'created_at']);
  });
  await knex.raw(`ALTER TABLE lists ADD CONSTRAINT lists_kind_check CHECK (kind IN ('people', 'company'))`);
  await knex.raw('CREATE UNIQUE INDEX lists_workspace_kind_name_unique ON lists (workspace_id, kind, lower(name))');

  await knex.schema.createTable('list_people', (t) => {
    t.uuid('list_id').notNullable().references('lists.id').onDelete('CASCADE');
    t.uuid('person_id').notNullable().references('people.id').onDelete('CASCADE');
    t.timestamp('added_at', { useTz: true }).notNullable();
    t.primary(['list_id', 'person_id']);
    t.index(['list_id', 'added_at', 'person_id']);
    t.index(['person_id']);
  });

  await knex.schema.createTable('list_companies', (t) => {
    t.uuid('list_id').notNullable().references('lists.id').onDelete('CASCADE');
    t.uuid('company_id').notNullable().references('companies.id').onDelete('CASCADE');
    t.timestamp('added_at', { useTz: true }).notNullable();
    t.primary(['list_id', 'company_id']);
    t.index(['list_id', 'added_at', 'company_id']);
    t.index(['company_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['list_companies', 'list_people', 'lists']) await knex.schema.dropTableIfExists(table);
}
