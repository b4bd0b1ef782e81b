/**
 * A second process that records events (the real EventService write path) on a test's PostgreSQL
 * database: `EVENTS` transactions for `WORKSPACE_ID`, `CONCURRENCY` at a time, each sleeping a random
 * few milliseconds before it commits so commits overtake one another. Prints the ids it recorded as JSON.
 */
import { openDatabase } from '../../server/db';
import { systemClock } from '../../server/platform/clock';
import { EventService } from '../../server/modules/events/service';
import { EventStore } from '../../server/modules/events/store';

async function main() {
  const database = await openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir: '' });
  const events = new EventService({ db: database.db, store: new EventStore(), clock: systemClock });
  const total = Number(process.env.EVENTS);
  const ids: string[] = [];
  let next = 0;
  const lane = async () => {
    while (next < total) {
      const i = next++;
      const id = await database.db.transaction(async (trx) => {
        const e = await events.record(trx, {
          workspaceId: process.env.WORKSPACE_ID!,
          type: 'contact.leadStatusChanged',
          data: { writer: 'process', i },
        });
        await trx.raw('SELECT pg_sleep(random() * 0.01)');
        return e.id;
      });
      ids.push(id);
    }
  };
  await Promise.all(Array.from({ length: Number(process.env.CONCURRENCY ?? 4) }, lane));
  await database.close();
  process.stdout.write(JSON.stringify(ids));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
