/**
 * Reads that may be served by a read replica (DATABASE_READ_URL): a service built on the replica's connection pool
 * answers them, and the same call runs on the primary instead when the replica cannot be reached (then the primary
 * is asked alone for `retryAfterMs` before the replica is tried again), when the read needs a write first
 * (`WriteNeeded`), or when the replica has not yet replayed what the workspace was last shown. Every routed call is
 * counted by where it was answered. Only whole operations that write nothing on the replica are routed (see the
 * composition root), so a replica's refusal to write never shows.
 *
 * Reads stay consistent for a workspace (as GitLab's database load balancer sticks a user to the primary): after a
 * change of the workspace, or after the primary answered a read of it, the primary's WAL position is noted for the
 * workspace, and the replica answers that workspace again only once it has replayed past it. The positions are
 * kept in memory, per process: another process (an API replica behind the same balancer) does not know them, so
 * a client that moves between API processes is consistent only within each. The replica's replay position is
 * asked at most once per `replayCheckMs` while some workspace waits for it.
 */
import type { Clock } from '../platform/clock';
import type { Tally } from '../observability/telemetry';
import { isStorageDown, type Db, type RawResult } from '.';

/** Thrown by a read on the replica that needs to write first (a rollup zone): the primary answers it instead. */
export class WriteNeeded extends Error {
  constructor(what: string) {
    super(`${what} needs a write: read on the primary`);
  }
}

export interface ReplicaRouter {
  /** `onReplica`, or `onPrimary` while the replica is unreachable, behind the workspace, or the read must write. */
  run<T>(workspaceId: string, onReplica: () => Promise<T>, onPrimary: () => Promise<T>): Promise<T>;
  /** Notes the primary's current WAL position for the workspace: the replica answers it once past that point. */
  noteShown(workspaceId: string): Promise<void>;
}

/** A WAL position (`16/B374D848`) as a number, for comparing. */
const walPosition = (lsn: string): bigint => {
  const [high, low] = lsn.split('/');
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
};

export function replicaRouter(options: {
  primary: Db;
  replica: Db;
  clock: Clock;
  answeredBy: Tally;
  retryAfterMs: number;
  replayCheckMs: number;
  onDown: (err: unknown) => void;
}): ReplicaRouter {
  let downUntil = 0;
  /** The position each workspace was last shown, until the replica is known to have replayed it. */
  const shown = new Map<string, bigint>();
  let replayed = { position: 0n, checkedAt: -Infinity };
  /** The question to the replica under way, which reads arriving meanwhile share. */
  let asking: Promise<void> | null = null;

  const askReplayed = async () => {
    const checkedAt = options.clock.now().getTime();
    const { rows } = await options.replica.raw<RawResult<{ lsn: string }>>(
      // A replica promoted to a primary replays nothing: its own position is what it has.
      'SELECT (CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END)::text AS lsn',
    );
    replayed = { position: walPosition(rows[0].lsn), checkedAt };
    for (const [id, position] of shown) if (position <= replayed.position) shown.delete(id);
  };

  /** Whether the replica has replayed what the workspace was shown (asking it when the known position is old). */
  const caughtUp = async (workspaceId: string): Promise<boolean> => {
    const wanted = shown.get(workspaceId);
    if (wanted === undefined) return true;
    if (replayed.position < wanted && options.clock.now().getTime() - replayed.checkedAt >= options.replayCheckMs) {
      asking ??= askReplayed().finally(() => (asking = null));
      await asking;
    }
    return replayed.position >= wanted;
  };

  const noteShown = async (workspaceId: string) => {
    const { rows } = await options.primary.raw<RawResult<{ lsn: string }>>('SELECT pg_current_wal_lsn()::text AS lsn');
    const position = walPosition(rows[0].lsn);
    if (position > (shown.get(workspaceId) ?? 0n)) shown.set(workspaceId, position);
  };

  return {
    noteShown,
    async run(workspaceId, onReplica, onPrimary) {
      if (options.clock.now().getTime() >= downUntil) {
        try {
          if (await caughtUp(workspaceId)) {
            const answer = await onReplica();
            options.answeredBy.add('replica');
            return answer;
          }
        } catch (err) {
          if (isStorageDown(err)) {
            downUntil = options.clock.now().getTime() + options.retryAfterMs;
            options.onDown(err);
          } else if (!(err instanceof WriteNeeded)) throw err;
        }
      }
      const answer = await onPrimary();
      options.answeredBy.add('primary');
      // What the primary showed may be newer than the replica: later reads of the workspace must not go back.
      await noteShown(workspaceId);
      return answer;
    },
  };
}

/** The workspace a service call is about: its first argument, a workspace id or a workspace. */
const workspaceOf = (args: unknown[]): string => {
  const first = args[0];
  return typeof first === 'string' ? first : (first as { id: string }).id;
};

/**
 * `primary` with calls of the `reads` methods answered by the same method of `replica` through the router (the
 * primary's when the replica is down or behind): the two are the same service built on the two databases. Each of
 * these methods takes the workspace (or its id) first. Other methods are the primary's.
 */
export function readFromReplica<S extends object>(
  primary: S,
  replica: S,
  reads: readonly (keyof S & string)[],
  router: ReplicaRouter,
): S {
  return new Proxy(primary, {
    get(target, property, receiver) {
      const own: unknown = Reflect.get(target, property, receiver);
      const other: unknown = Reflect.get(replica, property);
      if (typeof own !== 'function') return own;
      // The service's calls of its own methods (`this.get` in a write) stay on the primary, unrouted.
      if (!(reads as readonly PropertyKey[]).includes(property) || typeof other !== 'function')
        return own.bind(target) as unknown;
      return (...args: unknown[]) =>
        router.run(
          workspaceOf(args),
          () => Promise.resolve(other.apply(replica, args) as unknown),
          () => Promise.resolve(own.apply(target, args) as unknown),
        );
    },
  });
}

/**
 * `primary` with calls of the `shows` methods (reads on the primary that name an object: a job by its id) noting
 * the position the workspace was shown, so that a replica read of it does not contradict the answer. Each of these
 * methods takes the workspace (or its id) first.
 */
export function notingShown<S extends object>(
  primary: S,
  shows: readonly (keyof S & string)[],
  router: ReplicaRouter,
): S {
  return new Proxy(primary, {
    get(target, property, receiver) {
      const own: unknown = Reflect.get(target, property, receiver);
      if (typeof own !== 'function') return own;
      if (!(shows as readonly PropertyKey[]).includes(property)) return own.bind(target) as unknown;
      return async (...args: unknown[]) => {
        const answer = (await own.apply(target, args)) as unknown;
        await router.noteShown(workspaceOf(args));
        return answer;
      };
    },
  });
}
