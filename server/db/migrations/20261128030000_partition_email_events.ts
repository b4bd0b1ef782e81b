/**
 * email_events partitioned by RANGE of occurred_at, one partition per UTC month (`email_events_2026_11`), so
 * that a retention drops whole months instead of deleting rows. The raw events stay for audits and
 * rollup rebuilds; analytics read the rollups (migration 20261127010000).
 *
 * - A DEFAULT partition (`email_events_default`) takes an event whose month has no partition yet (a date far
 *   ahead, or long past), so no insert ever fails. The events module's `partitions` job creates the coming
 *   months ahead and moves what the default holds into partitions of its own months.
 * - The primary key is (id, occurred_at): a partitioned table's unique keys must hold the partition key. Ids
 *   stay unique (newId's UUIDv7); no foreign key references email_events.
 * - The foreign keys and indexes are those of the plain table, under the same names; each partition gets them.
 *
 * The migration moves the rows: a partition for every month they cover and the current one, then one copy.
 * `down` copies them back into the plain table.
 */
import type { Knex } from 'knex';

/** `2026-11` of an instant, in UTC. */
const monthOf = (at: Date): string => at.toISOString().slice(0, 7);

/** The month `n` months after (or before, negative) `month`. */
const addMonths = (month: string, n: number): string =>
  monthOf(new Date(Date.UTC(Number(month.slice(0, 4)), Number(month.slice(5, 7)) - 1 + n, 1)));

/** The partition holding the events of `month`. */
const partitionName = (month: string): string => `email_events_${month.replace('-', '_')}`;

/** Where `month` starts, as PostgreSQL reads it. */
const start = (month: string) => `${month}-01 00:00:00+00`;

/**
 * Creates the partition of `month`, moving into it the events of that month the default partition holds
 * (PostgreSQL refuses a partition whose rows sit in the default). Run in a transaction: it holds the parent
 * locked until commit, so a concurrent insert waits (milliseconds, the default being near empty) and then
 * routes by the new partitions, where one let through to the default during the attach would fail the
 * default's partition check. The new table is made LIKE the parent, so `*` lists the same columns in the same order on both
 * sides of the move.
 */
async function createMonthPartition(db: Knex | Knex.Transaction, month: string): Promise<void> {
  if (!/^\d{4}-\d{2}$/.test(month)) throw new Error(`not a month: ${month}`);
  const name = partitionName(month);
  // The parent alone is enough: every statement on email_events takes its lock first.
  await db.raw('LOCK TABLE ONLY email_events IN ACCESS EXCLUSIVE MODE');
  await db.raw(`CREATE TABLE ${name} (LIKE email_events INCLUDING DEFAULTS)`);
  await db.raw(
    `WITH moved AS (DELETE FROM email_events_default WHERE occurred_at >= ? AND occurred_at < ? RETURNING *) INSERT INTO ${name} SELECT * FROM moved`,
    [start(month), start(addMonths(month, 1))],
  );
  await db.raw(
    `ALTER TABLE email_events ATTACH PARTITION ${name} FOR VALUES FROM ('${start(month)}') TO ('${start(addMonths(month, 1))}')`,
  );
}

/** The keys and indexes of email_events, as the plain table had them (migrations 20261123090000 and 20261123170000). */
async function addKeys(knex: Knex, primaryKey: string): Promise<void> {
  await knex.raw(`ALTER TABLE email_events ADD CONSTRAINT email_events_pkey PRIMARY KEY (${primaryKey})`);
  const references = [
    ['workspace_id', 'workspaces', 'CASCADE'],
    ['campaign_id', 'campaigns', 'SET NULL'],
    ['step_id', 'campaign_steps', 'SET NULL'],
    ['variant_id', 'step_variants', 'SET NULL'],
    ['account_id', 'email_accounts', 'SET NULL'],
    ['contact_id', 'contacts', 'SET NULL'],
  ];
  for (const [column, table, onDelete] of references) {
    await knex.raw(
      `ALTER TABLE email_events ADD CONSTRAINT email_events_${column}_foreign FOREIGN KEY (${column}) REFERENCES ${table}(id) ON DELETE ${onDelete}`,
    );
  }
  for (const columns of [
    ['workspace_id', 'campaign_id', 'occurred_at'],
    ['workspace_id', 'account_id', 'occurred_at'],
    ['message_id'],
  ]) {
    await knex.raw(`CREATE INDEX email_events_${columns.join('_')}_index ON email_events (${columns.join(', ')})`);
  }
}

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE email_events RENAME TO email_events_unpartitioned');
  await knex.raw(
    'CREATE TABLE email_events (LIKE email_events_unpartitioned INCLUDING DEFAULTS) PARTITION BY RANGE (occurred_at)',
  );
  await knex.raw('CREATE TABLE email_events_default PARTITION OF email_events DEFAULT');
  const months = await knex.raw<{ rows: { month: string }[] }>(
    `SELECT to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM') AS month FROM email_events_unpartitioned
     UNION SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM')`,
  );
  for (const { month } of months.rows) await createMonthPartition(knex, month);
  // Keys and indexes after the copy: one build per index instead of a row at a time.
  await knex.raw('INSERT INTO email_events SELECT * FROM email_events_unpartitioned');
  await knex.raw('DROP TABLE email_events_unpartitioned');
  await addKeys(knex, 'id, occurred_at');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE email_events RENAME TO email_events_partitioned');
  await knex.raw('CREATE TABLE email_events (LIKE email_events_partitioned INCLUDING DEFAULTS)');
  await knex.raw('INSERT INTO email_events SELECT * FROM email_events_partitioned');
  // Its partitions go with it, and its keys' names with them.
  await knex.raw('DROP TABLE email_events_partitioned');
  await addKeys(knex, 'id');
}
