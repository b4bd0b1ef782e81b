/**
 * Fails the test during which a statement was sent on a PostgreSQL connection that was still running (or
 * holding) another: pg 8 queues it (and from the third at once warns "Calling client.query() when the client is
 * already executing a query is deprecated"), pg 9 will refuse it. It comes from running a transaction's queries
 * at once (`Promise.all` on a `trx`, or on an Executor that may be one); the pooled knex gives each query its own
 * connection. Loaded for every test file (jest.config.js); PGlite has no pg connections, so only the PostgreSQL
 * run checks.
 */
import { afterAll, afterEach } from '@jest/globals';
import { Client } from 'pg';

/** pg's own record of the statement running and those waiting behind it (private, read only here). */
interface QueryState {
  _activeQuery: unknown;
  _queryQueue: unknown[];
}

const probe = new Client() as unknown as Partial<QueryState>;
if (!('_activeQuery' in probe) || !Array.isArray(probe._queryQueue)) {
  throw new Error(
    'pg no longer keeps _activeQuery / _queryQueue: test/helpers/one-query-per-connection.ts cannot see overlapping queries any more',
  );
}

const overlaps = new Set<string>();
const proto = Client.prototype as unknown as { query: (this: QueryState, ...args: unknown[]) => unknown };
const query = proto.query;
proto.query = function (this: QueryState, ...args: unknown[]) {
  if (this._activeQuery || this._queryQueue.length > 0) overlaps.add(callerOf(args[0]));
  return query.apply(this, args);
};

/** The statement and the server code that sent it (the async frames name the function that ran queries at once). */
function callerOf(config: unknown): string {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 50;
  const stack = new Error().stack ?? '';
  Error.stackTraceLimit = limit;
  const frames = stack.split('\n').filter((line) => line.includes('/server/') && !line.includes('node_modules'));
  const sql =
    typeof config === 'string'
      ? config
      : typeof config === 'object' && config !== null && 'text' in config
        ? String(config.text)
        : '?';
  return `${sql.slice(0, 120)}\n${frames.join('\n')}`;
}

function assertNoOverlap(): void {
  if (overlaps.size === 0) return;
  const found = [...overlaps];
  overlaps.clear();
  throw new Error(
    `Queries overlapped on one PostgreSQL connection (run a transaction's queries one after another):\n\n${found.join('\n\n')}`,
  );
}

afterEach(assertNoOverlap);
afterAll(assertNoOverlap);
