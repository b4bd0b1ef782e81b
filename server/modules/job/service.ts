/**
 * Background jobs: contact import, verification, enrichment and contact actions in bulk.
 *
 * Accepting a job stores its input rows in batches (job_rows, job_batches) as the upload streams in, under
 * a job that stays `receiving` (invisible) until the whole input was read, then `queued`. The worker
 * (runOnce) claims one batch at a time with FOR UPDATE SKIP LOCKED and applies it in that same
 * transaction: the rows' effects (row-effects.ts, by job type), one result per row, the batch marked done and the job's progress and
 * counts. So several workers share a job's batches, and a batch whose worker died rolls back with its
 * connection and is claimed again, never applied twice. The last batch completes the job and records
 * `job.completed` in the same transaction; an error the batch cannot get past fails the job (`job.failed`).
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { components } from '../../../generated/api';
import type { Clock } from '../../platform/clock';
import type { Db, Executor } from '../../db';
import type { Backlog } from '../../observability/telemetry';
import type { Logger } from '../../platform/logger';
import { created } from '../../platform/cause';
import { newId } from '../../platform/ids';
import { DomainError, invalid, conflict, detail, notFound } from '../../platform/errors';
import type { CampaignService } from '../campaign';
import {
  type ContactBulk,
  type ContactBulkRequest,
  type ContactService,
  MAX_CUSTOM_VARIABLES,
  type NewContact,
} from '../contact';
import type { EnrichmentService } from '../leads';
import type { ListService } from '../list';
import type { EventService } from '../events';
import { csvRows, mapHeader, type ColumnMap } from './csv';
import { JobRowEffects, type JobRowEffectsDeps } from './row-effects';
import { ACTIVE, type InputRow, type JobRow, type JobStore, type ResultRow } from './store';

type Schemas = components['schemas'];
export type Job = Schemas['Job'];
export type JobType = Schemas['JobType'];
export type JobStatus = Schemas['JobStatus'];
type ImportOptions = Schemas['JobImportOptions'];
type EnrichmentInput = Schemas['EnrichmentInput'];
type PeopleDataOption = Schemas['PeopleDataOption'];

export const CSV_MAX_BYTES = 50 * 1024 * 1024;
export const CSV_MAX_ROWS = 500_000;

/** The outcomes each type counts (zeros included), in the order the spec lists them. */
const OUTCOMES: Record<JobType, (keyof Schemas['JobCounts'])[]> = {
  contactImport: ['created', 'skipped', 'invalid'],
  verify: ['valid', 'invalid', 'catchAll', 'unknown', 'disposable'],
  enrich: ['matched', 'unmatched'],
  contactBulk: ['changed', 'skipped'],
};

/** A job's progress as rows are accepted: the job id and the next row and batch numbers. */
interface Intake {
  id: string;
  rows: number;
  batches: number;
  pending: InputRow[];
}

/** Thrown inside a batch's transaction when the job was cancelled meanwhile: the batch rolls back. */
class JobStopped extends Error {}

/** Jobs a lane looks at for a batch nobody holds. */
const JOBS_LOOKED_AT = 20;
/** Rows applied between two looks at the job's status and the slice's time. */
const SLICE_ROWS = 50;
/** Wall time a batch's slice may take before its transaction commits and the worker chooses again. */
const SLICE_MS = 3000;

export function toJob(row: JobRow): Job {
  const type = row.type as JobType;
  const counts = Object.fromEntries(OUTCOMES[type].map((o) => [o, row.counts[o] ?? 0]));
  const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);
  return {
    id: row.id,
    type,
    status: row.status as JobStatus,
    progress: { total: row.total, processed: row.processed },
    counts,
    campaignId: row.campaign_id,
    listId: row.list_id,
    options: (row.options as ImportOptions | null) ?? null,
    dataOptions: (row.data_options as PeopleDataOption[] | null) ?? null,
    ...(row.contact_bulk ? { contactBulk: row.contact_bulk as ContactBulkRequest } : {}),
    credits: { charged: row.credits_charged },
    createdAt: new Date(row.created_at).toISOString(),
    startedAt: iso(row.started_at),
    finishedAt: iso(row.finished_at),
    error: row.error,
  };
}

const normalEmail = (value: unknown) => (typeof value === 'string' && value.trim() ? value.trim().toLowerCase() : null);

/** What JobService is built from, by name: its own needs and those of the rows' effects it hands batches to. */
export interface JobServiceDeps extends JobRowEffectsDeps {
  db: Db;
  campaigns: CampaignService;
  enrichment: EnrichmentService;
  events: EventService;
  clock: Clock;
  logger: Logger;
  batchSize: number;
  concurrency: number;
}

export class JobService {
  /** Which process applied a batch (job_batches.done_by). */
  private readonly workerName = `${hostname()}:${process.pid}`;

  private readonly db: Db;
  private readonly store: JobStore;
  private readonly contacts: ContactService;
  private readonly campaigns: CampaignService;
  private readonly enrichment: EnrichmentService;
  private readonly lists: ListService;
  private readonly events: EventService;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly batchSize: number;
  private readonly concurrency: number;
  private readonly contactBulk: ContactBulk;
  private readonly rowEffects: JobRowEffects;

  constructor(deps: JobServiceDeps) {
    const {
      db,
      store,
      contacts,
      campaigns,
      enrichment,
      lists,
      events,
      clock,
      logger,
      batchSize,
      concurrency,
      contactBulk,
    } = deps;
    this.db = db;
    this.store = store;
    this.contacts = contacts;
    this.campaigns = campaigns;
    this.enrichment = enrichment;
    this.lists = lists;
    this.events = events;
    this.clock = clock;
    this.logger = logger;
    this.batchSize = batchSize;
    this.concurrency = concurrency;
    this.contactBulk = contactBulk;
    this.rowEffects = new JobRowEffects(deps);
  }

  // --- accepting jobs ---

  async importCsv(workspaceId: string, into: ImportTarget, options: ImportOptions, body: Readable): Promise<Job> {
    const target = await this.importTarget(workspaceId, into, 'query');
    return this.spooled(
      body,
      (header) => mapHeader(header, MAX_CUSTOM_VARIABLES),
      (rows, columns) =>
        this.receive(
          workspaceId,
          'contactImport',
          { ...target, options },
          mapRows(rows, () => columns()),
        ),
    );
  }

  /** Exactly one of a campaign and a people list, the workspace's (404 otherwise), checked before anything is stored. */
  private async importTarget(
    workspaceId: string,
    { campaignId, listId }: ImportTarget,
    location: 'query' | 'body',
  ): Promise<Partial<JobRow>> {
    if (Boolean(campaignId) === Boolean(listId)) {
      throw invalid(`Give exactly one of campaignId and listId (in the ${location}).`, [
        detail('campaignId', 'exactly one of campaignId and listId is required', 'oneOf', location),
      ]);
    }
    if (listId) {
      await this.lists.assertPeopleList(workspaceId, listId);
      return { list_id: listId };
    }
    await this.campaigns.assertExists(this.db, workspaceId, campaignId!);
    return { campaign_id: campaignId! };
  }

  /**
   * Reads a CSV upload twice: first as it arrives, checking every line while the bytes go to a temporary
   * file (so a bad file is refused before anything is stored, and the request body is received at parsing
   * speed, well within the server's request timeout, whatever the database's pace); then from the file,
   * storing the rows. The file is deleted in both cases.
   */
  private async spooled<T>(
    body: Readable,
    readHeader: (header: string[]) => T,
    store: (rows: AsyncIterable<{ cells: string[] }>, header: () => T) => Promise<Job>,
  ): Promise<Job> {
    const dir = await mkdtemp(join(tmpdir(), 'lr-job-'));
    const file = join(dir, 'upload.csv');
    try {
      const copy = new PassThrough();
      const spool = createWriteStream(file);
      body.pipe(copy);
      copy.pipe(spool);
      const limits = { maxBytes: CSV_MAX_BYTES, maxRows: CSV_MAX_ROWS };
      try {
        for await (const _row of csvRows(body, limits, readHeader));
      } catch (err) {
        // The file is abandoned: what the copy still holds is dropped.
        copy.unpipe(spool);
        spool.on('error', () => {});
        spool.destroy();
        throw err;
      }
      await finished(spool);
      let header: T | null = null;
      return await store(
        csvRows(createReadStream(file), limits, (h) => (header = readHeader(h))),
        () => header!,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  async importJson(
    workspaceId: string,
    into: ImportTarget,
    options: ImportOptions,
    contacts: NewContact[],
  ): Promise<Job> {
    const target = await this.importTarget(workspaceId, into, 'body');
    this.contacts.checkVariables(contacts);
    return this.receive(
      workspaceId,
      'contactImport',
      { ...target, options },
      contacts.map((c) => ({ email: normalEmail(c.email), data: c })),
    );
  }

  /** POST /v2/contact/bulk: the contacts the filter selects now, one row each, for the action. */
  async bulkContacts(workspaceId: string, request: ContactBulkRequest): Promise<Job> {
    await this.contactBulk.check(workspaceId, request);
    const selected = this.contactBulk.select(workspaceId, request);
    async function* rows() {
      for await (const contact of selected) yield { email: contact.email, data: { contactId: contact.id } };
    }
    return this.receive(workspaceId, 'contactBulk', { contact_bulk: request }, rows());
  }

  async verifyEmails(workspaceId: string, emails: string[]): Promise<Job> {
    return this.receive(
      workspaceId,
      'verify',
      {},
      emails.map((e) => ({ email: normalEmail(e), data: { email: e } })),
    );
  }

  async verifyCsv(workspaceId: string, body: Readable): Promise<Job> {
    return this.spooled(
      body,
      (header) => mapHeader(header, Infinity).emailIndex,
      (rows, emailIndex) => {
        async function* emails() {
          for await (const { cells } of rows)
            yield { email: normalEmail(cells[emailIndex()]), data: { email: cells[emailIndex()] } };
        }
        return this.receive(workspaceId, 'verify', {}, emails());
      },
    );
  }

  /**
   * Matches every input, reveals and charges once, and stores the job with its rows: one transaction, so
   * a 400 or 402 leaves nothing charged, revealed or queued.
   */
  async enrich(workspaceId: string, people: EnrichmentInput[], dataOptions: PeopleDataOption[]): Promise<Job> {
    return this.db.transaction(async (trx) => {
      const { matches, charged } = await this.enrichment.matchAndReveal(trx, workspaceId, people, dataOptions);
      const job = this.newJob(workspaceId, 'enrich', {
        data_options: dataOptions,
        credits_charged: charged,
        status: 'queued',
        total: people.length,
      });
      await this.store.insert(trx, job);
      for (let first = 0; first < people.length; first += this.batchSize) {
        const rows = people.slice(first, first + this.batchSize).map((input, i) => ({
          row_no: first + i + 1,
          email: normalEmail(input.email),
          data: { input, ...matches[first + i] },
        }));
        await this.store.insertBatch(trx, job.id, first / this.batchSize + 1, rows);
      }
      return toJob(job);
    });
  }

  private newJob(workspaceId: string, type: JobType, fields: Partial<JobRow>): JobRow {
    return {
      id: created(newId()),
      workspace_id: workspaceId,
      type,
      status: 'receiving',
      total: 0,
      processed: 0,
      counts: {},
      campaign_id: null,
      list_id: null,
      options: null,
      data_options: null,
      contact_bulk: null,
      credits_charged: 0,
      error: null,
      created_at: this.clock.now(),
      started_at: null,
      finished_at: null,
      ...fields,
    };
  }

  /**
   * Stores the rows batch by batch as they are read (each batch its own short transaction, so the embedded
   * database's one connection is never held for the whole upload), then queues the job. When reading fails
   * the job and every row stored are deleted and the error is thrown: nothing is queued.
   */
  private async receive(
    workspaceId: string,
    type: JobType,
    fields: Partial<JobRow>,
    rows: AsyncIterable<{ email: string | null; data: unknown }> | Iterable<{ email: string | null; data: unknown }>,
  ): Promise<Job> {
    const job = this.newJob(workspaceId, type, fields);
    await this.store.insert(this.db, job);
    const intake: Intake = { id: job.id, rows: 0, batches: 0, pending: [] };
    try {
      for await (const row of rows) {
        intake.pending.push({ row_no: ++intake.rows, email: row.email, data: row.data });
        if (intake.pending.length === this.batchSize) await this.flush(intake);
      }
      if (intake.pending.length) await this.flush(intake);
      // A filter that selects no contact is a bulk job with nothing to do: done at once.
      if (!intake.rows && type === 'contactBulk') return await this.completeEmpty(workspaceId, job.id);
      if (!intake.rows)
        throw invalid('The input holds no rows.', [detail('body', 'must hold at least one row', 'minItems')]);
      return toJob(await this.store.update(this.db, job.id, { status: 'queued', total: intake.rows }));
    } catch (err) {
      await this.store.delete(this.db, job.id);
      throw err;
    }
  }

  private completeEmpty(workspaceId: string, jobId: string): Promise<Job> {
    return this.db.transaction(async (trx) => {
      const now = this.clock.now();
      const job = toJob(
        await this.store.update(trx, jobId, { status: 'completed', started_at: now, finished_at: now }),
      );
      await this.events.record(trx, { workspaceId, type: 'job.completed', data: { job } });
      return job;
    });
  }

  private async flush(intake: Intake): Promise<void> {
    const rows = intake.pending;
    intake.pending = [];
    await this.db.transaction((trx) => this.store.insertBatch(trx, intake.id, ++intake.batches, rows));
  }

  // --- reading and cancelling ---

  async get(workspaceId: string, jobId: string): Promise<Job> {
    return toJob(await this.visible(this.db, workspaceId, jobId));
  }

  async list(workspaceId: string, query: { limit?: number; skip?: number; type?: JobType; status?: JobStatus }) {
    const limit = query.limit ?? 20;
    const skip = query.skip ?? 0;
    const { rows, total } = await this.store.page(
      this.db,
      workspaceId,
      { type: query.type, status: query.status },
      limit,
      skip,
    );
    return { items: rows.map(toJob), pagination: { limit, skip, total, hasMore: skip + rows.length < total } };
  }

  /** Cancels a queued or running job; a batch being applied meanwhile rolls back (see applyBatch). */
  async cancel(workspaceId: string, jobId: string): Promise<Job> {
    return this.db.transaction(async (trx) => {
      const row = await this.visible(trx, workspaceId, jobId, true);
      if (!ACTIVE.includes(row.status))
        throw conflict(`The job is already ${row.status}; only a queued or running job can be cancelled.`);
      return toJob(await this.store.update(trx, row.id, { status: 'cancelled', finished_at: this.clock.now() }));
    });
  }

  /** The job and its input rows with their results, in input order, a page at a time (for the results file). */
  async openResults(workspaceId: string, jobId: string): Promise<{ job: Job; pages: AsyncGenerator<ResultLine[]> }> {
    const job = toJob(await this.visible(this.db, workspaceId, jobId));
    const store = this.store;
    const db = this.db;
    async function* pages(): AsyncGenerator<ResultLine[]> {
      let after = 0;
      for (;;) {
        const page = await store.resultPage(db, job.id, after, 2000);
        if (!page.length) return;
        after = page[page.length - 1].row_no;
        yield page;
      }
    }
    return { job, pages: pages() };
  }

  private async visible(db: Executor, workspaceId: string, jobId: string, forUpdate = false): Promise<JobRow> {
    const row = await this.store.find(db, workspaceId, jobId, forUpdate);
    if (!row) throw notFound('Job not found.');
    return row;
  }

  // --- the worker ---

  /** One batch of the oldest job with work left; returns the rows it processed (0 when idle). */
  /** Worker backlog for metrics: input rows waiting to be applied. */
  backlog(): Promise<Backlog> {
    return this.store.backlog(this.db);
  }

  /**
   * One pass: `concurrency` lanes (each batch its own transaction and connection: the database works on one
   * while this process prepares the next), each applying one slice of a batch. Lanes choose one after the
   * other, each taking the job whose workspace had its turn least recently, so workspaces share the worker
   * whatever each has queued; a slice lasts a few seconds at most, so another workspace's job waits no longer.
   */
  async runOnce(): Promise<number> {
    // Uploads whose process died before they finished are removed after an hour.
    await this.store.deleteStaleReceiving(this.db, new Date(this.clock.now().getTime() - 3600_000));
    const lanes: Promise<number>[] = [];
    for (let lane = 0; lane < this.concurrency; lane++) {
      const queue = await this.store.inTurn(this.db, JOBS_LOOKED_AT);
      if (queue.length === 0) break;
      await this.store.takeTurn(this.db, queue[0]);
      lanes.push(this.runLane(queue));
    }
    const done = await Promise.allSettled(lanes);
    const failed = done.find((d) => d.status === 'rejected');
    if (failed) throw failed.reason;
    return done.reduce((sum, d) => sum + (d.status === 'fulfilled' ? d.value : 0), 0);
  }

  /** A slice of the first job of `queue` (its turn taken) with a batch nobody holds; rows applied. */
  private async runLane(queue: string[]): Promise<number> {
    for (const [i, jobId] of queue.entries()) {
      if (i > 0) await this.store.takeTurn(this.db, jobId);
      const rows = await this.runBatch(jobId);
      if (rows) return rows;
    }
    return 0;
  }

  private async runBatch(jobId: string): Promise<number> {
    try {
      return await this.db.transaction((trx) => this.applyBatch(trx, jobId));
    } catch (err) {
      if (err instanceof JobStopped) return 0;
      // An error the request rules give (the campaign is gone, the contact cap, credits): retrying the
      // batch cannot help, so the job fails. Anything else (the database) is retried at the next run.
      if (err instanceof DomainError) {
        await this.fail(jobId, err.message);
        return 1;
      }
      throw err;
    }
  }

  /**
   * Applies the claimed batch from where its last slice ended, SLICE_ROWS rows at a time, until it is done or
   * SLICE_MS have passed (the rest is the next claim's); a cancel committed meanwhile stops it at the next
   * SLICE_ROWS rows and rolls the slice back.
   */
  private async applyBatch(trx: Executor, jobId: string): Promise<number> {
    const batch = await this.store.claimBatch(trx, jobId);
    if (!batch) return 0;
    const job = await this.store.findById(trx, jobId);
    if (!job || !ACTIVE.includes(job.status)) return 0;
    const rows = await this.store.rows(trx, jobId, batch.first_row + batch.applied, batch.row_count - batch.applied);
    const started = performance.now();
    const results: ResultRow[] = [];
    for (let i = 0; i < rows.length; i += SLICE_ROWS) {
      if (i > 0 && performance.now() - started > SLICE_MS) break;
      if (i > 0 && !ACTIVE.includes((await this.store.statusOf(trx, jobId))!)) throw new JobStopped();
      results.push(...(await this.rowEffects.apply(trx, job, rows.slice(i, i + SLICE_ROWS))));
    }
    await this.store.insertResults(trx, jobId, results);
    if (batch.applied + results.length < batch.row_count)
      await this.store.markBatchApplied(trx, batch, batch.applied + results.length);
    else await this.store.markBatchDone(trx, batch, this.workerName);

    // The job row last and briefly: workers sharing the job wait on each other only here.
    const locked = (await this.store.findById(trx, jobId, true))!;
    if (!ACTIVE.includes(locked.status)) throw new JobStopped();
    const counts = { ...locked.counts };
    for (const r of results) counts[r.outcome] = (counts[r.outcome] ?? 0) + 1;
    const processed = locked.processed + results.length;
    const now = this.clock.now();
    const finished = processed >= locked.total;
    const updated = await this.store.update(trx, jobId, {
      counts,
      processed,
      status: finished ? 'completed' : 'running',
      started_at: locked.started_at ?? now,
      finished_at: finished ? now : null,
    });
    if (finished)
      await this.events.record(trx, {
        workspaceId: job.workspace_id,
        type: 'job.completed',
        data: { job: toJob(updated) },
      });
    return results.length;
  }

  private async fail(jobId: string, message: string): Promise<void> {
    await this.db.transaction(async (trx) => {
      const row = await this.store.findById(trx, jobId, true);
      if (!row || !ACTIVE.includes(row.status)) return;
      const updated = await this.store.update(trx, jobId, {
        status: 'failed',
        error: message,
        finished_at: this.clock.now(),
      });
      await this.events.record(trx, {
        workspaceId: row.workspace_id,
        type: 'job.failed',
        data: { job: toJob(updated) },
      });
    });
    this.logger.warn({ jobId, error: message }, 'job failed');
  }
}

/** Where a contact import adds: exactly one of the two. */
export interface ImportTarget {
  campaignId?: string;
  listId?: string;
}

export type ResultLine = InputRow & {
  outcome: string | null;
  reason: string | null;
  detail: Record<string, unknown> | null;
};

/** CSV cells to a contact input: mapped fields, and every other non-empty cell as a custom variable. */
async function* mapRows(
  rows: AsyncIterable<{ cells: string[] }>,
  columns: () => ColumnMap,
): AsyncGenerator<{ email: string | null; data: NewContact }> {
  for await (const { cells } of rows) {
    const map = columns();
    const contact: Record<string, unknown> = {};
    for (const { index, field } of map.fields) {
      const value = cells[index].trim();
      if (value) contact[field] = value;
    }
    const variables: Record<string, string> = {};
    for (const { index, key } of map.variables) {
      const value = cells[index].trim();
      if (value) variables[key] = value;
    }
    if (Object.keys(variables).length) contact.customVariables = variables;
    contact.email ??= '';
    yield { email: normalEmail(contact.email), data: contact as NewContact };
  }
}
