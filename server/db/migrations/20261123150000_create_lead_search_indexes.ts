import type { Knex } from 'knex';

/**
 * Indexes that let a people search pick its page without touching the table (index-only scans;
 * the loaders VACUUM after a bulk load so the visibility map allows them), found with the query
 * plans of `npm run bench:search` on 1M people:
 *
 * - people_search walks people in result order (score desc, id) and carries the columns of the common
 *   filters, so "first page of a broad filter" reads a few hundred index pages instead of one random
 *   heap page per scanned row. It replaces people_score_id.
 * - (seniority | department, score desc, id) serve one seniority or department in result order (deep
 *   pages: OFFSET over a narrow index) and count seniority + department combinations.
 * - (lower(company_industry), company_employee_count) and (company_employee_count) INCLUDE ... count
 *   industry / company-size searches exactly without bitmap-ANDing hundreds of thousands of rows.
 *   They replace the single-column indexes on those columns; email_status (4 values) is never a
 *   useful index by itself and only led the planner into huge bitmap ANDs.
 */
const CREATE = [
  `CREATE INDEX people_search ON people (score DESC, id)
     INCLUDE (seniority, department, email_status, company_employee_count, company_industry, location_terms, title_tsv)`,
  `CREATE INDEX people_seniority_score ON people (seniority, score DESC, id)
     INCLUDE (department, email_status, company_employee_count, company_industry)`,
  `CREATE INDEX people_department_score ON people (department, score DESC, id)
     INCLUDE (seniority, email_status, company_employee_count, company_industry)`,
  // company_industry itself is included: an index-only scan needs the column, not only lower() of it.
  'CREATE INDEX people_industry_employees ON people (lower(company_industry), company_employee_count) INCLUDE (company_industry)',
  `CREATE INDEX people_employees_cover ON people (company_employee_count)
     INCLUDE (seniority, department, email_status, company_industry, location_terms, title_tsv)`,
];
const REPLACED = [
  'CREATE INDEX people_score_id ON people (score DESC, id)',
  'CREATE INDEX people_seniority ON people (seniority)',
  'CREATE INDEX people_department ON people (department)',
  'CREATE INDEX people_company_industry ON people (lower(company_industry))',
  'CREATE INDEX people_company_employee_count ON people (company_employee_count)',
  'CREATE INDEX people_email_status ON people (email_status)',
];
const nameOf = (sql: string) => /INDEX (\w+)/.exec(sql)![1];

export async function up(knex: Knex): Promise<void> {
  for (const sql of REPLACED) await knex.raw(`DROP INDEX IF EXISTS ${nameOf(sql)}`);
  for (const sql of CREATE) await knex.raw(sql);
}

export async function down(knex: Knex): Promise<void> {
  for (const sql of CREATE) await knex.raw(`DROP INDEX IF EXISTS ${nameOf(sql)}`);
  for (const sql of REPLACED) await knex.raw(sql);
}
