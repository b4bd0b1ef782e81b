/**
 * Reads that may be served by a read replica (DATABASE_READ_URL): a service built on the replica's connection pool
 * answers them, and when the replica cannot be reached the same call runs on the primary instead, which is then
 * asked alone for `retryAfterMs` before the replica is tried again. Every routed call is counted by where it was
 * answered. Only whole operations that write nothing are routed (see the composition root), so a replica's refusal
 * to write never shows.
 */
import type { Clock } from '../platform/clock';
import type { Tally } from '../observability/telemetry';
import { isStorageDown } from '.';

export interface ReplicaRouter {
  /** `onReplica`, or `onPrimary` while the replica is unreachable. */
  run<T>(onReplica: () => Promise<T>, onPrimary: () => Promise<T>): Promise<T>;
}

export function replicaRouter(options: {
  clock: Clock;
  answeredBy: Tally;
  retryAfterMs: number;
  onDown: (err: unknown) => void;
}): ReplicaRouter {
  let downUntil = 0;
  return {
    async run(onReplica, onPrimary) {
      if (options.clock.now().getTime() >= downUntil) {
        try {
          const answer = await onReplica();
          options.answeredBy.add('replica');
          return answer;
        } catch (err) {
          if (!isStorageDown(err)) throw err;
          downUntil = options.clock.now().getTime() + options.retryAfterMs;
          options.onDown(err);
        }
      }
      const answer = await onPrimary();
      options.answeredBy.add('primary');
      return answer;
    },
  };
}

/**
 * `primary` with calls of the `reads` methods answered by the same method of `replica` through the router (the
 * primary's when the replica is down): the two are the same service built on the two databases. Other methods are
 * the primary's.
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
      if (!(reads as readonly PropertyKey[]).includes(property)) return own;
      if (typeof own !== 'function' || typeof other !== 'function') return own;
      return (...args: unknown[]) =>
        router.run(
          () => Promise.resolve(other.apply(replica, args) as unknown),
          () => Promise.resolve(own.apply(target, args) as unknown),
        );
    },
  });
}
