/** Plain rows of jobs, their input rows, batches and results. Callers pass their transaction. */
import { queryAll, type Executor } from '../../db';
import type { Backlog, BacklogRow } from '../../observability/telemetry';

export type JobStatusValue = 'receiving' | 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';
export const ACTIVE: JobStatusValue[] = ['queued', 'running'];

export interface JobRow {
  id: string;
  workspace_id: string;
  type: string;
  status: JobStatusValue;
  total: number;
  processed: number;
  counts: Record<string, number>;
  campaign_id: string | null;
  list_id: string | null;
  options: Record<string, boolean> | null;
  data_options: string[] | null;
  /** A contactBulk job's request: its action and filter. */
  contact_bulk: unknown;
  credits_charged: number;
  error: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

export interface InputRow {
  row_no: number;
  email: string | null;
  data: unknown;
}

export interface BatchRow {
  job_id: string;
  batch_no: number;
  first_row: number;
  row_count: number;
  /** Rows of the batch already applied (earlier slices). */
  applied: number;
}

export interface ResultRow {
  row_no: number;
  outcome: string;
  reason: string | null;
  detail: Record<string, unknown> | null;
}

/** 4 columns x 2,500 rows: far below PostgreSQL's 65,535 bind parameters. */
const ROWS_PER_INSERT = 2500;

const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));

export class JobStore {
  async insert(db: Executor, row: JobRow): Promise<void> {
    await db('jobs').insert({
      ...row,
      counts: json(row.counts),
      options: json(row.options),
      data_options: json(row.data_options),
      contact_bulk: json(row.contact_bulk),
    });
  }

  /*
   * Jobs are locked FOR NO KEY UPDATE: the batch's inserts of rows referencing the job hold FOR KEY SHARE on
   * it, and two batches upgrading that to FOR UPDATE would deadlock each other.
   */

  /** A visible job of the workspace (never one still receiving its upload). */
  async find(db: Executor, workspaceId: string, id: string, forUpdate = false): Promise<JobRow | undefined> {
    const q = db<JobRow>('jobs').where({ id, workspace_id: workspaceId }).whereNot('status', 'receiving').first();
    return forUpdate ? q.forNoKeyUpdate() : q;
  }

  async findById(db: Executor, id: string, forUpdate = false): Promise<JobRow | undefined> {
    const q = db<JobRow>('jobs').where({ id }).first();
    return forUpdate ? q.forNoKeyUpdate() : q;
  }

  async page(
    db: Executor,
    workspaceId: string,
    filter: { type?: string; status?: string },
    limit: number,
    skip: number,
  ): Promise<{ rows: JobRow[]; total: number }> {
    const base = () => {
      const q = db<JobRow>('jobs').where('workspace_id', workspaceId).whereNot('status', 'receiving');
      if (filter.type) q.andWhere('type', filter.type);
      if (filter.status) q.andWhere('status', filter.status);
      return q;
    };
    const [rows, count] = await queryAll(db, [
      () =>
        base()
          .orderBy([
            { column: 'created_at', order: 'desc' },
            { column: 'id', order: 'desc' },
          ])
          .limit(limit)
          .offset(skip),
      () => base().count<{ n: string | number }[]>({ n: '*' }).first(),
    ]);
    return { rows, total: Number(count?.n ?? 0) };
  }

  async update(db: Executor, id: string, patch: Partial<JobRow>): Promise<JobRow> {
    const values: Record<string, unknown> = { ...patch };
    if (patch.counts) values.counts = json(patch.counts);
    const [row] = await db('jobs').where({ id }).update(values).returning<JobRow[]>('*');
    return row;
  }

  async delete(db: Executor, id: string): Promise<void> {
    await db('jobs').where({ id }).delete();
  }

  /** Input rows of queued and running jobs not yet applied, and the oldest such job's creation (the worker's backlog). */
  async backlog(db: Executor): Promise<Backlog> {
    const row = await db('job_batches as b')
      .join('jobs as j', 'j.id', 'b.job_id')
      .whereIn('j.status', ACTIVE)
      .whereNull('b.done_by')
      .first<BacklogRow>(
        db.raw('coalesce(sum(b.row_count - b.applied), 0)::int as due'),
        db.raw('min(j.created_at) as oldest'),
      );
    return { due: row?.due ?? 0, oldestDueAt: row?.oldest ? new Date(row.oldest) : null };
  }

  /**
   * Ids of jobs with work left, in turn: first the workspaces whose jobs took a turn least recently (never
   * first), each workspace's jobs oldest first.
   */
  async inTurn(db: Executor, limit: number): Promise<string[]> {
    const { rows } = await db.raw<{ rows: { id: string }[] }>(
      `SELECT j.id FROM jobs j
         JOIN (SELECT workspace_id, max(claim_turn) AS turn FROM jobs WHERE status IN ('queued', 'running')
                GROUP BY workspace_id) w ON w.workspace_id = j.workspace_id
        WHERE j.status IN ('queued', 'running')
        ORDER BY w.turn NULLS FIRST, j.workspace_id, j.created_at, j.id
        LIMIT ?`,
      [limit],
    );
    return rows.map((r) => r.id);
  }

  /** The job takes a turn now: its workspace goes behind every other with work left. */
  async takeTurn(db: Executor, jobId: string): Promise<void> {
    await db('jobs')
      .where({ id: jobId })
      .update({ claim_turn: db.raw("nextval('job_claim_turns')") });
  }

  /** The job's status as committed now (a cancel landing while a batch is applied). */
  async statusOf(db: Executor, jobId: string): Promise<JobStatusValue | undefined> {
    const row = await db<JobRow>('jobs').where({ id: jobId }).first('status');
    return row?.status;
  }

  /** Uploads that never finished (their process died): deleted with their rows. */
  async deleteStaleReceiving(db: Executor, before: Date): Promise<number> {
    return db('jobs').where('status', 'receiving').andWhere('created_at', '<', before).delete();
  }

  /** Input rows and the batch that covers them (one batch per call). */
  async insertBatch(db: Executor, jobId: string, batchNo: number, rows: InputRow[]): Promise<void> {
    for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
      await db('job_rows').insert(
        rows
          .slice(i, i + ROWS_PER_INSERT)
          .map((r) => ({ job_id: jobId, row_no: r.row_no, email: r.email, data: JSON.stringify(r.data) })),
      );
    }
    await db('job_batches').insert({
      job_id: jobId,
      batch_no: batchNo,
      first_row: rows[0].row_no,
      row_count: rows.length,
      done_by: null,
    });
  }

  /** The next batch nobody holds, locked until the caller's transaction ends; a held one is skipped. */
  async claimBatch(trx: Executor, jobId: string): Promise<BatchRow | undefined> {
    return trx<BatchRow>('job_batches')
      .where({ job_id: jobId })
      .whereNull('done_by')
      .orderBy('batch_no')
      .first('job_id', 'batch_no', 'first_row', 'row_count', 'applied')
      .forUpdate()
      .skipLocked();
  }

  async markBatchDone(trx: Executor, batch: BatchRow, doneBy: string): Promise<void> {
    await trx('job_batches').where({ job_id: batch.job_id, batch_no: batch.batch_no }).update({ done_by: doneBy });
  }

  /** A slice of the batch was applied: the next claim goes on after it. */
  async markBatchApplied(trx: Executor, batch: BatchRow, applied: number): Promise<void> {
    await trx('job_batches').where({ job_id: batch.job_id, batch_no: batch.batch_no }).update({ applied });
  }

  async rows(db: Executor, jobId: string, first: number, count: number): Promise<InputRow[]> {
    return db('job_rows')
      .where('job_id', jobId)
      .andWhere('row_no', '>=', first)
      .andWhere('row_no', '<', first + count)
      .orderBy('row_no')
      .select('row_no', 'email', 'data');
  }

  /**
   * The first row of the job holding each of `emails`: one index probe per address (an aggregate subquery,
   * never flattened), where `email in (...)` had the planner scan every row of the job per batch whenever
   * its statistics still counted the job as small.
   */
  async firstRows(db: Executor, jobId: string, emails: string[]): Promise<Map<string, number>> {
    if (!emails.length) return new Map();
    const { rows } = await db.raw<{ rows: { email: string; first: number }[] }>(
      `select wanted.email, f.first from unnest(?::text[]) as wanted(email)
       cross join lateral (select min(row_no)::int as first from job_rows where job_id = ? and email = wanted.email) f
       where f.first is not null`,
      [emails, jobId],
    );
    return new Map(rows.map((r) => [r.email, r.first]));
  }

  async insertResults(db: Executor, jobId: string, results: ResultRow[]): Promise<void> {
    for (let i = 0; i < results.length; i += ROWS_PER_INSERT) {
      await db('job_results').insert(
        results.slice(i, i + ROWS_PER_INSERT).map((r) => ({ job_id: jobId, ...r, detail: json(r.detail) })),
      );
    }
  }

  /** Input rows from `after` on with their results (null when not processed), in input order. */
  async resultPage(
    db: Executor,
    jobId: string,
    after: number,
    limit: number,
  ): Promise<(InputRow & { outcome: string | null; reason: string | null; detail: Record<string, unknown> | null })[]> {
    return db('job_rows as r')
      .leftJoin('job_results as x', (j) => j.on('x.job_id', 'r.job_id').andOn('x.row_no', 'r.row_no'))
      .where('r.job_id', jobId)
      .andWhere('r.row_no', '>', after)
      .orderBy('r.row_no')
      .limit(limit)
      .select('r.row_no', 'r.email', 'r.data', 'x.outcome', 'x.reason', 'x.detail');
  }
}
