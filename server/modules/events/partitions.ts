/**
 * email_events is partitioned by RANGE of occurred_at, one partition per UTC month (`email_events_2026_11`),
 * so that a retention drops whole months instead of deleting rows. A DEFAULT partition (`email_events_default`)
 * takes an event whose month has no partition yet; the events module's `partitions` job creates the coming
 * months ahead and moves what the default holds into partitions of their own months.
 */
import type { Executor } from '../../db';

/** `2026-11` of an instant, in UTC. */
export const monthOf = (at: Date): string => at.toISOString().slice(0, 7);

/** The month `n` months after (or before, negative) `month`. */
export const addMonths = (month: string, n: number): string =>
  monthOf(new Date(Date.UTC(Number(month.slice(0, 4)), Number(month.slice(5, 7)) - 1 + n, 1)));

/** The partition holding the events of `month`. */
export const partitionName = (month: string): string => `email_events_${month.replace('-', '_')}`;

/** Month partitions by name; the default partition and anything else attached by hand do not match. */
export const PARTITION_NAME = /^email_events_(\d{4})_(\d{2})$/;

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
export async function createMonthPartition(db: Executor, month: string): Promise<void> {
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
