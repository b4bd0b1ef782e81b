import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from '../../server/db';
import { generateLeads } from '../../server/modules/leads/generate';
import { importLeadsCsv } from '../../server/modules/leads/import';
import { employeeRangeOf, normalizeDomain, type PersonRow } from '../../server/modules/leads/model';
import { migratedDatabase } from '../helpers/server';

jest.setTimeout(120_000);

/** A table's row count (PostgreSQL answers a bigint count as text, PGlite as a number). */
const count = async (d: Database, table: string) => Number((await d.db(table).count({ n: '*' }).first())?.n);

describe('generateLeads', () => {
  it('is deterministic per seed, and emails follow each company domain', async () => {
    const [a, b] = [await migratedDatabase(), await migratedDatabase()];
    try {
      for (const d of [a, b])
        await generateLeads(d.db, { people: 300, companies: 30, seed: 9, now: new Date('2026-01-01T00:00:00Z') });
      const rows = (d: Database) =>
        d.db('people').orderBy('id').select('id', 'first_name', 'title', 'work_email', 'company_id', 'score');
      expect(await rows(a)).toEqual(await rows(b));
      expect(await count(a, 'companies')).toBe(30);
      const mismatched = await a
        .db('people')
        .whereNotNull('work_email')
        .whereRaw("split_part(work_email, '@', 2) <> company_domain")
        .count({ n: '*' })
        .first();
      expect(Number(mismatched?.n)).toBe(0);
      await expect(generateLeads(a.db, { people: 1, companies: 1 })).rejects.toThrow(/already holds/);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe('importLeadsCsv', () => {
  let dir: string;
  let d: Database;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'leads-import-'));
    d = await migratedDatabase();
  });
  afterAll(async () => {
    await d.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const csv = (name: string, text: string) => {
    const file = join(dir, name);
    writeFileSync(file, text);
    return file;
  };

  it('reports invalid rows by line and imports nothing, or only the valid rows with skipInvalid', async () => {
    const file = csv(
      'companies.csv',
      'Company Name,Website,Employees,Color\nAcme,https://www.acme.com,"1,200",blue\n,x.com,3,red\nBad,bad.com,lots,\nAcme Again,acme.com,4,\n',
    );
    await expect(importLeadsCsv(d.db, { kind: 'companies', file })).rejects.toMatchObject({
      report: {
        unknownColumns: ['Color'],
        errors: [
          { line: 3, message: 'name is empty' },
          { line: 4, message: 'employee_count "lots" is not a whole number' },
          { line: 5, message: 'acme.com is already on line 2' },
        ],
      },
    });
    expect(await count(d, 'companies')).toBe(0);
    const report = await importLeadsCsv(d.db, { kind: 'companies', file, skipInvalid: true });
    expect(report).toMatchObject({ inserted: 1, updated: 0 });
    expect(await d.db('companies').first('name', 'domain', 'employee_count')).toEqual({
      name: 'Acme',
      domain: 'acme.com',
      employee_count: 1200,
    });
  });

  it('links people to companies by domain, creates unknown ones, and refuses a file without required columns', async () => {
    const file = csv(
      'people.csv',
      'first_name,last_name,title,seniority,department,email,company_domain,company_name\nAda,Lovelace,VP Engineering,vice president,engineering,ada@acme.com,acme.com,\nGrace,Hopper,CTO,c-suite,IT,grace@newco.dev,newco.dev,NewCo\n',
    );
    expect(await importLeadsCsv(d.db, { kind: 'people', file })).toMatchObject({ inserted: 2, companiesCreated: 1 });
    const ada = await d.db<PersonRow>('people').where({ first_name: 'Ada' }).first();
    expect(ada).toMatchObject({
      seniority: 'vp',
      department: 'engineering',
      company_domain: 'acme.com',
      company_name: 'Acme',
      email_status: 'unverified',
    });
    const grace = await d.db<PersonRow>('people').where({ first_name: 'Grace' }).first();
    expect(grace).toMatchObject({ seniority: 'cSuite', department: 'informationTechnology', company_name: 'NewCo' });
    await expect(
      importLeadsCsv(d.db, { kind: 'people', file: csv('bad.csv', 'name,email\nAda,ada@x.com\n') }),
    ).rejects.toThrow(/missing required column\(s\): first_name, last_name/);
  });
});

describe('model helpers', () => {
  it('brackets employee counts and normalizes domains', () => {
    expect([employeeRangeOf(0), employeeRangeOf(10), employeeRangeOf(11), employeeRangeOf(10001)]).toEqual([
      null,
      '1-10',
      '11-50',
      '10001+',
    ]);
    expect([normalizeDomain('https://www.Acme.com/about'), normalizeDomain('not a domain')]).toEqual([
      'acme.com',
      null,
    ]);
  });
});
