/** Plain rows of placement tests and their results. Callers pass their transaction. */
import { jsonColumn, queryAll, type Executor } from '../../db';
import { backlogOf, type Backlog } from '../../observability/telemetry';

export type Placement = 'pending' | 'inbox' | 'spam' | 'nowhere' | 'notSent';
export type ResultState = 'queued' | 'sending' | 'sent' | 'done';

export interface TestRow {
  id: string;
  workspace_id: string;
  status: 'running' | 'completed';
  subject: string;
  text_body: string;
  html_body: string | null;
  account_ids: string[];
  recipient_count: number;
  timeout_minutes: number;
  created_at: Date;
  deadline_at: Date;
  completed_at: Date | null;
}

export interface ResultRow {
  id: string;
  test_id: string;
  position: number;
  account_id: string;
  from_address: string;
  recipient_id: string;
  recipient_email: string;
  recipient_shown: string;
  recipient_domain: string;
  state: ResultState;
  due_at: Date;
  attempts: number;
  placement: Placement;
  folder: string | null;
  message_id: string | null;
  sent_at: Date | null;
  seen_at: Date | null;
  reason: string | null;
}

/** 19 columns x 1,000 rows: far below PostgreSQL's 65,535 bind parameters (a test has at most 10 x 100). */
const ROWS_PER_INSERT = 1000;

const parsed = (row: TestRow): TestRow => ({
  ...row,
  // PGlite and pg both parse jsonb; a text driver would not. The column holds what insert() wrote.
  account_ids: jsonColumn(row.account_ids) as string[],
});

export class PlacementStore {
  async insert(db: Executor, test: TestRow, results: ResultRow[]): Promise<void> {
    await db('placement_tests').insert({ ...test, account_ids: JSON.stringify(test.account_ids) });
    for (let i = 0; i < results.length; i += ROWS_PER_INSERT)
      await db('placement_results').insert(results.slice(i, i + ROWS_PER_INSERT));
  }

  async find(db: Executor, workspaceId: string, id: string): Promise<TestRow | undefined> {
    const row = await db<TestRow>('placement_tests').where({ workspace_id: workspaceId, id }).first();
    return row && parsed(row);
  }

  async page(
    db: Executor,
    workspaceId: string,
    status: TestRow['status'] | undefined,
    limit: number,
    skip: number,
  ): Promise<{ rows: TestRow[]; total: number }> {
    const scope = () => {
      const q = db('placement_tests').where('workspace_id', workspaceId);
      if (status) q.andWhere('status', status);
      return q;
    };
    const [rows, [{ total }]] = await queryAll(db, [
      () =>
        scope()
          .orderBy([
            { column: 'created_at', order: 'desc' },
            { column: 'id', order: 'desc' },
          ])
          .limit(limit)
          .offset(skip)
          .select<TestRow[]>('*'),
      () => scope().count<{ total: string | number }[]>({ total: '*' }),
    ]);
    return { rows: rows.map(parsed), total: Number(total) };
  }

  async results(db: Executor, testIds: string[]): Promise<ResultRow[]> {
    if (!testIds.length) return [];
    return db<ResultRow>('placement_results').whereIn('test_id', testIds).orderBy(['test_id', 'position']);
  }

  /** Placement counts per test (for a list page, without loading every result). */
  async counts(db: Executor, testIds: string[]): Promise<{ test_id: string; placement: Placement; n: number }[]> {
    if (!testIds.length) return [];
    return db('placement_results')
      .whereIn('test_id', testIds)
      .groupBy('test_id', 'placement')
      .select('test_id', 'placement', db.raw('count(*)::int AS n'));
  }

  /**
   * Claims due rows of one state (skipping rows another worker holds) and pushes their due time to `until`:
   * the lease for sends, the next look for reads.
   */
  async claim(db: Executor, state: 'queued' | 'sent', now: Date, until: Date, limit: number): Promise<ResultRow[]> {
    const states = state === 'queued' ? ['queued', 'sending'] : ['sent'];
    const rows = await db<ResultRow>('placement_results')
      .whereIn('state', states)
      .andWhere('due_at', '<=', now)
      .orderBy('due_at')
      .limit(limit)
      .forUpdate()
      .skipLocked();
    if (!rows.length) return [];
    const update: Partial<ResultRow> = state === 'queued' ? { state: 'sending', due_at: until } : { due_at: until };
    await db('placement_results')
      .whereIn(
        'id',
        rows.map((r) => r.id),
      )
      .update(update);
    if (state === 'queued')
      await db('placement_results')
        .whereIn(
          'id',
          rows.map((r) => r.id),
        )
        .increment('attempts', 1);
    return rows.map((r) => ({ ...r, ...update, attempts: state === 'queued' ? r.attempts + 1 : r.attempts }));
  }

  /** Sends and looks due now (the metrics' backlog; on the claim's partial index). */
  backlog(db: Executor, now: Date): Promise<Backlog> {
    return backlogOf(
      db('placement_results').whereIn('state', ['queued', 'sending', 'sent']).andWhere('due_at', '<=', now),
      'due_at',
    );
  }

  /** Updates a row only while it is still in `state` (a deadline may have closed it meanwhile). */
  async updateIf(db: Executor, id: string, state: ResultState, values: Partial<ResultRow>): Promise<boolean> {
    return (await db('placement_results').where({ id, state }).update(values)) > 0;
  }

  async testsOf(db: Executor, ids: string[]): Promise<TestRow[]> {
    if (!ids.length) return [];
    return (await db<TestRow>('placement_tests').whereIn('id', ids)).map(parsed);
  }

  /** Running tests that are done (nothing left to send or look for) or past their deadline, locked. */
  async finishable(db: Executor, now: Date, limit: number): Promise<TestRow[]> {
    const rows = await db<TestRow>('placement_tests')
      .where('status', 'running')
      .andWhere((q) => {
        q.where('deadline_at', '<=', now).orWhereNotExists(
          db('placement_results').whereRaw('placement_results.test_id = placement_tests.id').whereNot('state', 'done'),
        );
      })
      .orderBy('deadline_at')
      .limit(limit)
      .forUpdate()
      .skipLocked();
    return rows.map(parsed);
  }

  /** Closes what is left of a test at its end: unsent rows are notSent, unseen ones nowhere. */
  async closeOpen(db: Executor, testId: string, reasons: { unsent: string; unseen: string }): Promise<void> {
    // A reason already there (the last SMTP answer, a mailbox that could not be read) says more.
    const open = (states: string[]) => db('placement_results').where({ test_id: testId }).whereIn('state', states);
    await open(['queued', 'sending']).update({
      state: 'done',
      placement: 'notSent',
      reason: db.raw('COALESCE(reason, ?)', [reasons.unsent]),
    });
    await open(['sent']).update({
      state: 'done',
      placement: 'nowhere',
      reason: db.raw('COALESCE(reason, ?)', [reasons.unseen]),
    });
  }

  async complete(db: Executor, testId: string, now: Date): Promise<void> {
    await db('placement_tests').where({ id: testId }).update({ status: 'completed', completed_at: now });
  }
}
