/**
 * Health for a load balancer, with no key and no quota: `/healthz` answers while the process runs;
 * `/readyz` answers 200 only when the database answers and every migration of this build is applied,
 * and 503 from the moment a shutdown starts, so the balancer stops sending new requests while the ones
 * in flight finish. Both name the worker jobs the process runs (WORKER_JOBS; none in an API process without a
 * worker), so an operator sees which process does what.
 */
import { Router } from 'express';
import { pendingMigrations, type Db } from '../db';

export interface Readiness {
  /** Flipped by the process when it starts shutting down. */
  draining: boolean;
  /** The worker roles the process runs. */
  jobs: readonly string[];
}

export function healthRoutes(db: Db, readiness: Readiness): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    if (readiness.draining) {
      res.status(503).set('Connection', 'close').json({ status: 'draining', jobs: readiness.jobs });
      return;
    }
    try {
      const pending = await pendingMigrations(db);
      if (pending.length) res.status(503).json({ status: 'migrationsPending', pending, jobs: readiness.jobs });
      else res.json({ status: 'ok', jobs: readiness.jobs });
    } catch {
      res.status(503).json({ status: 'unavailable', jobs: readiness.jobs });
    }
  });
  return router;
}
