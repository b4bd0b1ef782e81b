import type { Knex } from 'knex';

/**
 * The event feed (events module): every recorded event, as webhooks receive it, with a per-workspace
 * position that readers page by.
 *
 * A sequence would not do: two transactions can take 7 and 8 and commit 8 first, and a reader that saw 8
 * would then skip 7 forever. Positions are therefore handed out under a row lock on the workspace's
 * `event_streams` row, so they commit in order; and that happens in a constraint trigger deferred to the
 * commit, so the lock is held only from the end of the transaction's work to its commit (never across
 * the work itself), and it is the last lock a transaction takes (no deadlock with the rows the work
 * locked). Deferred triggers fire in insertion order, so a transaction's events keep their order. Each
 * firing is two primary-key look-ups, whatever the table holds. (Two transactions that both record events
 * of the same two workspaces, in opposite orders, could deadlock at commit; PostgreSQL then aborts one,
 * which its job retries.)
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('events', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    /** Set at commit by events_assign_position; null only inside the recording transaction. */
    t.bigInteger('position').nullable();
    t.text('type').notNullable();
    /** No foreign key: an event stays where it happened when its campaign is deleted. */
    t.uuid('campaign_id').nullable();
    t.timestamp('occurred_at', { useTz: true }).notNullable();
    t.timestamp('recorded_at', { useTz: true }).notNullable();
    /** The event exactly as webhooks receive it. */
    t.jsonb('payload').notNullable();
  });
  await knex.raw('CREATE UNIQUE INDEX events_feed ON events (workspace_id, position)');
  await knex.raw('CREATE INDEX events_recorded ON events (recorded_at)');
  await knex.schema.createTable('event_streams', (t) => {
    t.uuid('workspace_id').primary().references('workspaces.id').onDelete('CASCADE');
    t.bigInteger('last_position').notNullable().defaultTo(0);
  });
  await knex.raw(`
    CREATE FUNCTION events_assign_position() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      next_position bigint;
    BEGIN
      INSERT INTO event_streams AS s (workspace_id, last_position) VALUES (NEW.workspace_id, 1)
        ON CONFLICT (workspace_id) DO UPDATE SET last_position = s.last_position + 1
        RETURNING last_position INTO next_position;
      UPDATE events SET position = next_position WHERE id = NEW.id;
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE CONSTRAINT TRIGGER events_position AFTER INSERT ON events
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION events_assign_position()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER IF EXISTS events_position ON events');
  await knex.raw('DROP FUNCTION IF EXISTS events_assign_position()');
  await knex.schema.dropTableIfExists('events');
  await knex.schema.dropTableIfExists('event_streams');
}
