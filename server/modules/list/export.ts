/**
 * Writes a list export to the response as it is read, batch by batch: CSV (RFC 4180 quoting, formula-injection
 * escaping) or JSON in the envelope the caller wraps `{ list, items }` in. Each batch becomes a few pieces of text, and the next batch is read
 * only when the response has taken them (back-pressure), so memory stays flat whatever the list's size, and the
 * per-row cost is the formatting alone, not a stream step per row. What a batch allocates dies young (see
 * scripts/README.md, the list export's memory): a batch outliving two young-generation collections would be
 * promoted to the old space, which then stays grown long after the export.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Response } from 'express';
import type { CompanyMember, List, PersonMember } from './service';

type Member = PersonMember | CompanyMember;
type Cell = string | number | null | undefined;

const joined = (values: readonly string[] | undefined) => values?.join('|');

/** Column name -> cell, in column order. A field the workspace has not revealed is absent: an empty cell. */
const PERSON_CELLS: Record<string, (m: PersonMember) => Cell> = {
  id: (m) => m.id,
  firstName: (m) => m.firstName,
  lastName: (m) => m.lastName,
  title: (m) => m.title,
  seniority: (m) => m.seniority,
  department: (m) => m.department,
  city: (m) => m.city,
  state: (m) => m.state,
  country: (m) => m.country,
  emailStatus: (m) => m.emailStatus,
  email: (m) => m.email,
  mobilePhone: (m) => m.mobilePhone,
  linkedinUrl: (m) => m.linkedinUrl,
  companyId: (m) => m.company?.id,
  companyName: (m) => m.company?.name,
  companyDomain: (m) => m.company?.domain,
  companyWebsiteUrl: (m) => m.company?.websiteUrl,
  companyIndustry: (m) => m.company?.industry,
  revealed: (m) => joined(m.revealed),
  addedAt: (m) => m.addedAt,
};

const COMPANY_CELLS: Record<string, (m: CompanyMember) => Cell> = {
  id: (m) => m.id,
  name: (m) => m.name,
  domain: (m) => m.domain,
  websiteUrl: (m) => m.websiteUrl,
  industry: (m) => m.industry,
  city: (m) => m.city,
  state: (m) => m.state,
  country: (m) => m.country,
  employeeCount: (m) => m.employeeCount,
  employeeRange: (m) => m.employeeRange,
  revenueRange: (m) => m.revenueRange,
  foundedYear: (m) => m.foundedYear,
  keywords: (m) => joined(m.keywords),
  technologies: (m) => joined(m.technologies),
  linkedinUrl: (m) => m.linkedinUrl,
  phone: (m) => m.phone,
  description: (m) => m.description,
  revealed: (m) => String(m.revealed),
  addedAt: (m) => m.addedAt,
};

/** A cell that holds one of these is quoted, its quotes doubled (RFC 4180). */
const NEEDS_QUOTES = /[",\n\r]/;
/** Text a spreadsheet would run as a formula (OWASP's CSV injection list, full-width forms included) gets a `'`. */
const FORMULA_START = /^[-=+@\t\r\uFF0B\uFF0D\uFF1D\uFF20]/;

/**
 * One cell as csv-stringify writes it with `escape_formulas` (the export's bytes are the same), without the
 * arrays and option objects it makes per cell: with them they were most of an export's garbage.
 */
function csvCell(value: Cell): string {
  if (value === null || value === undefined || value === '') return '';
  // A number is never quoted, nor escaped as a formula (a negative one is a number, not a formula).
  if (typeof value === 'number') return String(value);
  const text = FORMULA_START.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(value) ? `"${text.replaceAll('"', '""')}"` : text;
}

/**
 * A piece of an export's text stays below V8's large-object size (128 KB, even in two-byte characters): a large
 * string still waiting for the socket at a young-generation collection is promoted at once.
 */
const PIECE_CHARS = 32 * 1024;

async function* csvChunks(list: List, batches: AsyncIterable<Member[]>): AsyncGenerator<string> {
  const byColumn = list.kind === 'people' ? PERSON_CELLS : COMPANY_CELLS;
  const cells = Object.values(byColumn) as ((m: Member) => Cell)[];
  yield Object.keys(byColumn).map(csvCell).join(',') + '\n';
  // One row's cells, reused row after row: a row leaves its line behind and nothing else.
  const row: string[] = new Array<string>(cells.length);
  const iterator = batches[Symbol.asyncIterator]();
  /** The next batch's pieces of text (none when no batch is left): only they outlive the call, not its members. */
  const nextPieces = async (): Promise<string[]> => {
    const next = await iterator.next();
    if (next.done) return [];
    const pieces: string[] = [];
    let lines: string[] = [];
    let chars = 0;
    const cut = () => {
      // One flat string with its last line break (a string added to it would be flattened again as it is sent).
      lines.push('');
      pieces.push(lines.join('\n'));
      lines = [];
      chars = 0;
    };
    for (const member of next.value) {
      for (let i = 0; i < cells.length; i += 1) row[i] = csvCell(cells[i](member));
      const line = row.join(',');
      lines.push(line);
      chars += line.length + 1;
      if (chars >= PIECE_CHARS) cut();
    }
    if (lines.length) cut();
    return pieces.length ? pieces : nextPieces();
  };
  for (let pieces = await nextPieces(); pieces.length; pieces = await nextPieces()) yield* pieces;
}

/** At most one piece of text waits for the response beside what its socket buffers. */
const ONE_AHEAD = { highWaterMark: 1 };

/** What wraps an export's `{ list, items }` in a JSON answer. */
export type Envelope = (data: { list: List; items: unknown[] }) => unknown;

async function* jsonChunks(list: List, batches: AsyncIterable<Member[]>, envelope: Envelope): AsyncGenerator<string> {
  // The envelope around the items, split where the items go.
  const [head, tail] = JSON.stringify(envelope({ list, items: ['\u0000'] })).split('"\\u0000"');
  yield head;
  let first = true;
  for await (const batch of batches) {
    if (!batch.length) continue;
    yield (first ? '' : ',') + batch.map((m) => JSON.stringify(m)).join(',');
    first = false;
  }
  yield tail;
}

export async function writeExport(
  res: Response,
  list: List,
  batches: AsyncIterable<Member[]>,
  format: 'csv' | 'json',
  envelope: Envelope,
): Promise<void> {
  res.status(200);
  res.setHeader('Content-Disposition', `attachment; filename="list-${list.id}.${format}"`);
  if (format === 'json') {
    res.type('application/json; charset=utf-8');
    await pipeline(Readable.from(jsonChunks(list, batches, envelope), ONE_AHEAD), res);
    return;
  }
  res.type('text/csv; charset=utf-8');
  await pipeline(Readable.from(csvChunks(list, batches), ONE_AHEAD), res);
}
