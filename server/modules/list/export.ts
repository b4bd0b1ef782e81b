/**
 * Writes a list export to the response as it is read, batch by batch: CSV through csv-stringify (RFC 4180
 * quoting, formula-injection escaping) or JSON in the usual envelope. Each batch becomes one piece of text,
 * and the next batch is read only when the response has taken it (back-pressure), so memory stays flat
 * whatever the list's size, and the per-row cost is the formatting alone, not a stream step per row.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Response } from 'express';
import { stringify } from 'csv-stringify/sync';
import { ok } from '../../http/route';
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

async function* csvChunks(list: List, batches: AsyncIterable<Member[]>): AsyncGenerator<string> {
  const byColumn = list.kind === 'people' ? PERSON_CELLS : COMPANY_CELLS;
  const columns = Object.keys(byColumn);
  const cells = Object.values(byColumn) as ((m: Member) => Cell)[];
  let header = true;
  for await (const batch of batches) {
    if (!batch.length) continue;
    yield stringify(
      batch.map((member) => cells.map((cell) => cell(member))),
      { header, columns, escape_formulas: true },
    );
    header = false;
  }
  if (header) yield stringify([], { header, columns });
}

/** At most one piece of text waits for the response beside what its socket buffers. */
const ONE_AHEAD = { highWaterMark: 1 };

async function* jsonChunks(list: List, batches: AsyncIterable<Member[]>): AsyncGenerator<string> {
  // The envelope around the items, split where the items go.
  const [head, tail] = JSON.stringify(ok('List exported', { list, items: ['\u0000'] })).split('"\\u0000"');
  yield head;
  let first = true;
  for await (const batch of batches) {
    if (!batch.length) continue;
    yield (first ? '' : ',') + batch.map((m) => JSON.stringify(m)).join(',');
    first = false;
  }
  yield tail;
}

export async function writeExport(res: Response, list: List, batches: AsyncIterable<Member[]>, format: 'csv' | 'json'): Promise<void> {
  res.status(200);
  res.setHeader('Content-Disposition', `attachment; filename="list-${list.id}.${format}"`);
  if (format === 'json') {
    res.type('application/json; charset=utf-8');
    await pipeline(Readable.from(jsonChunks(list, batches), ONE_AHEAD), res);
    return;
  }
  res.type('text/csv; charset=utf-8');
  await pipeline(Readable.from(csvChunks(list, batches), ONE_AHEAD), res);
}
