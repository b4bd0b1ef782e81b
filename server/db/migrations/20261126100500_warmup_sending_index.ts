/**
 * The warm-up sender looks, every run, for emails left `sending` by a worker that stopped: a partial index keeps
 * that look from scanning every warm-up email ever sent (warmup_messages grows by every pool member's daily count).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw("CREATE INDEX warmup_messages_sending ON warmup_messages (sent_at) WHERE status = 'sending'");
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX warmup_messages_sending');
}
