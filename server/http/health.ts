/**
 * Health for a load balancer, with no key and no quota: `/healthz` answers while the process runs;
 * `/readyz` answers 200 only when the database answers and every migration of this build is applied,
 * and 503 from the moment a shutdown starts, so the balancer stops sending new requests while the ones
 * in flight finish.
 */
import { Router } from 'express';
import { pendingMigrations, type Db } from '../db';

/** Flipped by the process when it starts shutting down. */
export interface Readiness {
  draining: boolean;
}

export function healthRoutes(db: Db, readiness: Readiness): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    if (readiness.draining) {
      res.status(503).set('Connection', 'close').json({ status: 'draining' });
      return;
    }
    try {
      const pending = await pendingMigrations(db);
      if (pending.length) res.status(503).json({ status: 'migrationsPending', pending });
      else res.json({ status: 'ok' });
    } catch {
      res.status(503).json({ status: 'unavailable' });
    }
  });
  return router;
}
