import type { Knex } from 'knex';

/** Deliveries in flight, by claim time: the stale-claim sweep and the per-subscription bound read them every run. */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    "CREATE INDEX webhook_deliveries_delivering ON webhook_deliveries (claimed_at) WHERE status = 'delivering'",
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS webhook_deliveries_delivering');
}
