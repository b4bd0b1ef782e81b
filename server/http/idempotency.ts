/**
 * Idempotency keys with Stripe's semantics, for every operation whose spec declares the
 * `Idempotency-Key` header (read from the operation the validator matched, so there is no list to
 * keep). Mounted after the key, the quota and request validation: a refused request stores nothing,
 * and a replay counts toward the quota like any request.
 *
 * The first request with a key claims it with one INSERT ... ON CONFLICT DO NOTHING on
 * (workspace, key), so of any number of concurrent requests in any number of processes exactly one
 * runs. Its answer is stored before it is sent (a retry right after it is received replays, never
 * 409) and kept for 24 hours. A 5xx answer deletes the claim so a retry runs again. A claim whose
 * process died is taken over by a retry once its lease (IDEMPOTENCY_LEASE_SECONDS) has passed.
 * Stored answers are encrypted when the server has a secret key: some hold a secret shown once (a
 * new sub-user's API key, a webhook signing secret).
 *
 * A body no parser read (a CSV upload the handler streams) is read here first, hashed as it streams into a
 * temporary file, so its contents are part of the fingerprint whether it came with a length or chunked; the
 * handler then reads the file (`res.locals.upload`, the route helper's `upload`), deleted with the response.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { NextFunction, Request, Response } from 'express';
import type { Clock } from '../platform/clock';
import type { Db } from '../db';
import type { Logger } from '../platform/logger';
import { backlogOf, type Backlog, type Telemetry } from '../observability/telemetry';
import { newId } from '../platform/ids';
import type { AuthContext } from './admission';
import { detail } from '../platform/errors';
import { ApiError, wireDetail } from './errors';

const RETENTION_MS = 24 * 3600 * 1000;
/** Expired rows deleted per worker run. */
const SWEEP_BATCH = 1000;

type Claim =
  | { outcome: 'run'; claimId: string }
  | { outcome: 'replay'; status: number; body: string }
  | { outcome: 'inProgress' }
  | { outcome: 'reused' };

/** Encryption at rest, with the row as authenticated context (the composition root gives SecretBox). */
export interface AnswerCipher {
  encrypt(plaintext: string, context: string): string;
  decrypt(stored: string, context: string): string;
}

interface Row {
  fingerprint: string;
  state: 'running' | 'done';
  response_status: number | null;
  response_body: string | null;
}

/** What IdempotencyStore is built from, by name. */
interface IdempotencyStoreDeps {
  db: Db;
  clock: Clock;
  leaseSeconds: number;
  /** null: answers are stored in plain text (PostgreSQL without SECRET_KEY). */
  cipher: AnswerCipher | null;
}

export class IdempotencyStore {
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly leaseSeconds: number;
  private readonly cipher: AnswerCipher | null;

  constructor({ db, clock, leaseSeconds, cipher }: IdempotencyStoreDeps) {
    this.db = db;
    this.clock = clock;
    this.leaseSeconds = leaseSeconds;
    this.cipher = cipher;
  }

  async claim(workspaceId: string, key: string, fingerprint: string): Promise<Claim> {
    const now = this.clock.now();
    const claimId = newId();
    const fresh = {
      fingerprint,
      state: 'running',
      claim_id: claimId,
      locked_until: new Date(now.getTime() + this.leaseSeconds * 1000),
      response_status: null,
      response_body: null,
      created_at: now,
      expires_at: new Date(now.getTime() + RETENTION_MS),
    };
    const inserted = await this.db('idempotency_keys')
      .insert({ workspace_id: workspaceId, key, ...fresh })
      .onConflict(['workspace_id', 'key'])
      .ignore()
      .returning('key');
    if (inserted.length) return { outcome: 'run', claimId };
    // An expired row, or the same request's claim whose lease ran out (its process died): take it
    // over in one conditional UPDATE, so only one of several retries wins.
    const taken = await this.db('idempotency_keys')
      .where({ workspace_id: workspaceId, key })
      .andWhere((q) => {
        q.where('expires_at', '<=', now).orWhere((r) => {
          r.where({ state: 'running', fingerprint }).andWhere('locked_until', '<=', now);
        });
      })
      .update(fresh)
      .returning('key');
    if (taken.length) return { outcome: 'run', claimId };
    const row: Row | undefined = await this.db('idempotency_keys')
      .where({ workspace_id: workspaceId, key })
      .first('fingerprint', 'state', 'response_status', 'response_body');
    // Released by a 5xx between the statements above: the next attempt may run it.
    if (!row) return { outcome: 'inProgress' };
    if (row.fingerprint !== fingerprint) return { outcome: 'reused' };
    if (row.state === 'running') return { outcome: 'inProgress' };
    const body = this.cipher ? this.cipher.decrypt(row.response_body!, `${workspaceId}/${key}`) : row.response_body!;
    return { outcome: 'replay', status: row.response_status!, body };
  }

  async complete(workspaceId: string, key: string, claimId: string, status: number, body: string): Promise<void> {
    await this.db('idempotency_keys')
      .where({ workspace_id: workspaceId, key, claim_id: claimId, state: 'running' })
      .update({
        state: 'done',
        locked_until: null,
        response_status: status,
        response_body: this.cipher ? this.cipher.encrypt(body, `${workspaceId}/${key}`) : body,
      });
  }

  /** Frees the key after a 5xx, so a retry runs the request again. */
  async release(workspaceId: string, key: string, claimId: string): Promise<void> {
    await this.db('idempotency_keys').where({ workspace_id: workspaceId, key, claim_id: claimId }).delete();
  }

  /** Worker backlog for metrics: keys past their 24 hours, not yet deleted. */
  backlog(): Promise<Backlog> {
    const now = this.clock.now();
    return backlogOf(this.db('idempotency_keys').where('expires_at', '<=', now), 'expires_at');
  }

  /** Worker job: deletes keys past their 24 hours. */
  async runOnce(): Promise<number> {
    const expired = this.db('idempotency_keys')
      .where('expires_at', '<=', this.clock.now())
      .limit(SWEEP_BATCH)
      .select('workspace_id', 'key');
    const deleted = await this.db('idempotency_keys')
      .whereIn(['workspace_id', 'key'], expired)
      .delete()
      .returning('key');
    return deleted.length;
  }
}

/** JSON with object keys sorted, so `{a, b}` and `{b, a}` are the same request. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value ?? null, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

interface Parameter {
  $ref?: string;
  name?: string;
  in?: string;
}

/** Whether the operation the validator matched declares the header (directly or through a $ref). */
function declaresIdempotencyKey(
  req: Request,
  spec: { components?: { parameters?: Record<string, Parameter> } },
): boolean {
  const operation = (req as Request & { openapi?: { schema?: { parameters?: Parameter[] } } }).openapi?.schema;
  return (operation?.parameters ?? []).some((p) => {
    const param = p.$ref ? spec.components?.parameters?.[p.$ref.split('/').pop()!] : p;
    return param?.in === 'header' && param.name?.toLowerCase() === 'idempotency-key';
  });
}

/**
 * Reads a streamed request body into a file in a new temporary folder, hashing it on the way: the SHA-256 of
 * its bytes. Past `maxBytes` the rest is read and dropped, then a 413: the answer reaches the client.
 */
async function spoolBody(req: Request, res: Response, maxBytes: number): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'lr-upload-'));
  res.on('close', () => void rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'body');
  const hash = createHash('sha256');
  let bytes = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      if (bytes > maxBytes) return done();
      hash.update(chunk);
      done(null, chunk);
    },
  });
  await pipeline(req, meter, createWriteStream(file));
  if (bytes > maxBytes) throw new ApiError(413, 'payload_too_large', 'Request body is too large.');
  res.locals.upload = createReadStream(file);
  return hash.digest('hex');
}

export function idempotency(
  store: IdempotencyStore,
  spec: object,
  logger: Logger,
  telemetry: Telemetry,
  /** The most a streamed body may hold (the bulk jobs' limit). */
  maxStreamedBytes: number,
) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const key = req.get('Idempotency-Key');
    // Without the header, or on an operation that does not take one, every request runs.
    if (key === undefined || !declaresIdempotencyKey(req, spec)) return next();
    const { workspaceId } = res.locals.auth as AuthContext;
    const body: unknown =
      req.body === undefined
        ? { contentType: req.get('content-type') ?? null, sha256: await spoolBody(req, res, maxStreamedBytes) }
        : req.body;
    const fingerprint = createHash('sha256')
      .update(`${req.method} ${req.originalUrl}\n${canonicalJson(body)}`)
      .digest('hex');

    const claim = await store.claim(workspaceId, key, fingerprint);
    if (claim.outcome === 'reused') {
      throw new ApiError(
        422,
        'idempotency_key_reused',
        'This Idempotency-Key was already used for another request. Use a fresh key for a new request.',
        [
          wireDetail(
            detail('Idempotency-Key', 'was used for another method, path or body', 'idempotency_key_reused', 'header'),
          ),
        ],
      );
    }
    if (claim.outcome === 'inProgress') {
      throw new ApiError(
        409,
        'idempotency_in_progress',
        'A request with this Idempotency-Key is still in progress. Retry later with the same key.',
      );
    }
    if (claim.outcome === 'replay') {
      telemetry.idempotentReplay();
      res
        .status(claim.status)
        .set({ 'Idempotent-Replayed': 'true', 'Content-Type': 'application/json; charset=utf-8' })
        .send(claim.body);
      return;
    }

    // Every answer of this request, the error middleware's included, passes through res.json.
    const send = res.json.bind(res);
    res.json = (body: unknown) => {
      const stored =
        res.statusCode >= 500
          ? store.release(workspaceId, key, claim.claimId)
          : store.complete(workspaceId, key, claim.claimId, res.statusCode, JSON.stringify(body));
      // The answer goes out even when it could not be stored: the work is done either way; the key
      // then stays claimed until its lease ends.
      stored
        .catch((err: unknown) => logger.error({ err, requestId: res.locals.requestId }, 'idempotency key not stored'))
        .finally(() => send(body));
      return res;
    };
    next();
  };
}
