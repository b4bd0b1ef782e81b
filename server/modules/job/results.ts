/**
 * The results file: one CSV line per input row, in input order, streamed page by page through
 * csv-stringify (RFC 4180 quoting, formula-injection escaping) with back-pressure, so memory stays flat.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Response } from 'express';
import { stringify } from 'csv-stringify';
import type { Job, ResultLine } from './service';

type Cell = string | number | boolean | null | undefined;
type Columns = Record<string, (line: ResultLine) => Cell>;

const input = (line: ResultLine) => line.data as Record<string, unknown>;
const detail = (line: ResultLine, key: string) => line.detail?.[key] as Cell;

/** A row the job never reached: the job ended without it. */
function outcome(job: Job, line: ResultLine): [Cell, Cell] {
  if (line.outcome) return [line.outcome, line.reason];
  if (job.status === 'cancelled') return ['notProcessed', 'jobCancelled'];
  if (job.status === 'failed') return ['notProcessed', 'jobFailed'];
  return [null, null];
}

function columns(job: Job): Columns {
  const common: Columns = { row: (l) => l.row_no };
  const result: Columns = { outcome: (l) => outcome(job, l)[0], reason: (l) => outcome(job, l)[1] };
  switch (job.type) {
    case 'contactImport':
      // A list import adds lead-database people; a campaign import, contacts.
      return {
        ...common,
        email: (l) => input(l).email as Cell,
        ...result,
        ...(job.listId
          ? { personId: (l: ResultLine) => detail(l, 'personId') }
          : { contactId: (l: ResultLine) => detail(l, 'contactId') }),
      };
    case 'verify':
      return {
        ...common,
        email: (l) => input(l).email as Cell,
        ...result,
        ...Object.fromEntries(
          ['score', 'isRoleAccount', 'isFreeProvider', 'isDisposable', 'mxFound'].map((k) => [
            k,
            (l: ResultLine) => detail(l, k),
          ]),
        ),
      };
    case 'enrich': {
      const given = (l: ResultLine) => (input(l).input ?? {}) as Record<string, Cell>;
      return {
        ...common,
        ...Object.fromEntries(
          ['email', 'linkedinUrl', 'firstName', 'lastName', 'companyDomain', 'companyName'].map((k) => [
            k,
            (l: ResultLine) => given(l)[k],
          ]),
        ),
        ...result,
        personId: (l) => detail(l, 'personId'),
        workEmail: (l) => detail(l, 'workEmail'),
        mobilePhone: (l) => detail(l, 'mobilePhone'),
        title: (l) => detail(l, 'title'),
        personLinkedinUrl: (l) => detail(l, 'linkedinUrl'),
        personCompanyName: (l) => detail(l, 'companyName'),
        personCompanyDomain: (l) => detail(l, 'companyDomain'),
      };
    }
    case 'contactBulk':
      return {
        ...common,
        contactId: (l) => input(l).contactId as Cell,
        email: (l) => l.email,
        ...result,
        existingContactId: (l) => detail(l, 'existingContactId'),
      };
  }
}

export async function writeResults(res: Response, job: Job, pages: AsyncIterable<ResultLine[]>): Promise<void> {
  const cells = columns(job);
  const getters = Object.values(cells);
  async function* records() {
    for await (const page of pages) for (const line of page) yield getters.map((get) => get(line));
  }
  res.status(200);
  res.setHeader('Content-Disposition', `attachment; filename="job-${job.id}.csv"`);
  res.type('text/csv; charset=utf-8');
  await pipeline(
    Readable.from(records()),
    stringify({
      header: true,
      columns: Object.keys(cells),
      escape_formulas: true,
      cast: { boolean: (b) => String(b) },
    }),
    res,
  );
}
