import type { Knex } from 'knex';

/**
 * The lead database: companies, people, and what each workspace has revealed (and paid for).
 *
 * People carry a copy of their company's search fields (company_name, company_domain,
 * company_industry, company_employee_count, company_keywords) so that the common searches
 * (industry + employee range + seniority + location) filter one table through its indexes instead of
 * joining 1M people to 100k companies. The loaders in server/modules/leads/ keep the copy in step.
 *
 * Word matching uses full-text search (tsvector + GIN): pg_trgm is not available on the embedded
 * database. Search columns are generated, so COPY and plain inserts fill them with no extra step.
 * Text in lists (keywords, locations, technologies) is stored lower-case so array overlap (&&) is a
 * case-insensitive match through a GIN index.
 */
export async function up(knex: Knex): Promise<void> {
  // array_to_string is only STABLE (it calls element output functions); for text[] it is in fact
  // immutable, and generated columns need an immutable expression.
  await knex.raw(`CREATE FUNCTION leads_words(text[]) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT coalesce(array_to_string($1, ' '), '') $$`);

  await knex.schema.createTable('companies', (t) => {
    t.uuid('id').primary();
    t.text('name').notNullable();
    t.text('domain').nullable();
    t.text('website_url').nullable();
    t.text('industry').nullable();
    t.integer('employee_count').nullable();
    t.text('revenue_range').nullable();
    t.text('city').nullable();
    t.text('state').nullable();
    t.text('country').nullable();
    t.smallint('founded_year').nullable();
    t.specificType('keywords', 'text[]').notNullable().defaultTo('{}');
    t.specificType('technologies', 'text[]').notNullable().defaultTo('{}');
    t.text('linkedin_url').nullable();
    t.text('phone').nullable();
    t.text('description').nullable();
    /** How the company writes work emails: first.last, flast, first, firstl, first_last. */
    t.text('email_pattern').nullable();
    /** Static relevance (size, completeness): results are ordered by score desc, id. */
    t.smallint('score').notNullable().defaultTo(0);
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
  });
  await knex.raw(`ALTER TABLE companies
    ADD COLUMN name_tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', name)) STORED,
    ADD COLUMN keywords_tsv tsvector GENERATED ALWAYS AS (to_tsvector('english',
      name || ' ' || coalesce(industry, '') || ' ' || leads_words(keywords) || ' ' || coalesce(description, ''))) STORED,
    ADD COLUMN location_terms text[] GENERATED ALWAYS AS (ARRAY[lower(city), lower(state), lower(country)]) STORED`);
  await knex.raw('CREATE UNIQUE INDEX companies_domain_unique ON companies (lower(domain))');
  await knex.raw('CREATE INDEX companies_score_id ON companies (score DESC, id)');
  await knex.raw('CREATE INDEX companies_name_lower ON companies (lower(name))');
  await knex.raw('CREATE INDEX companies_industry_lower ON companies (lower(industry))');
  await knex.raw('CREATE INDEX companies_employee_count ON companies (employee_count)');
  await knex.raw('CREATE INDEX companies_name_tsv ON companies USING gin (name_tsv)');
  await knex.raw('CREATE INDEX companies_keywords_tsv ON companies USING gin (keywords_tsv)');
  await knex.raw('CREATE INDEX companies_location_terms ON companies USING gin (location_terms)');
  await knex.raw('CREATE INDEX companies_technologies ON companies USING gin (technologies)');

  await knex.schema.createTable('people', (t) => {
    t.uuid('id').primary();
    t.text('first_name').notNullable();
    t.text('last_name').notNullable();
    t.text('title').nullable();
    /** owner | founder | c_suite | partner | vp | head | director | manager | senior | entry | intern */
    t.text('seniority').nullable();
    t.text('department').nullable();
    t.text('city').nullable();
    t.text('state').nullable();
    t.text('country').nullable();
    t.text('linkedin_url').nullable();
    t.text('work_email').nullable();
    /** verified | likely | unverified | unavailable (no work email known). */
    t.text('email_status').notNullable().defaultTo('unavailable');
    t.text('mobile_phone').nullable();
    t.uuid('company_id').nullable().references('companies.id').onDelete('SET NULL');
    // Copies of the company's search fields (see the note above).
    t.text('company_name').nullable();
    t.text('company_domain').nullable();
    t.text('company_industry').nullable();
    t.integer('company_employee_count').nullable();
    t.specificType('company_keywords', 'text[]').notNullable().defaultTo('{}');
    t.smallint('score').notNullable().defaultTo(0);
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
  });
  await knex.raw(`ALTER TABLE people
    ADD COLUMN title_tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', coalesce(title, ''))) STORED,
    ADD COLUMN keywords_tsv tsvector GENERATED ALWAYS AS (to_tsvector('english',
      coalesce(title, '') || ' ' || coalesce(department, '') || ' ' || coalesce(company_name, '') || ' ' ||
      coalesce(company_industry, '') || ' ' || leads_words(company_keywords))) STORED,
    ADD COLUMN location_terms text[] GENERATED ALWAYS AS (ARRAY[lower(city), lower(state), lower(country)]) STORED`);
  await knex.raw('CREATE INDEX people_score_id ON people (score DESC, id)');
  await knex.raw('CREATE INDEX people_company_id ON people (company_id)');
  await knex.raw('CREATE INDEX people_company_domain ON people (lower(company_domain))');
  await knex.raw('CREATE INDEX people_company_industry ON people (lower(company_industry))');
  await knex.raw('CREATE INDEX people_company_employee_count ON people (company_employee_count)');
  await knex.raw('CREATE INDEX people_seniority ON people (seniority)');
  await knex.raw('CREATE INDEX people_department ON people (department)');
  await knex.raw('CREATE INDEX people_email_status ON people (email_status)');
  await knex.raw('CREATE INDEX people_title_tsv ON people USING gin (title_tsv)');
  await knex.raw('CREATE INDEX people_keywords_tsv ON people USING gin (keywords_tsv)');
  await knex.raw('CREATE INDEX people_location_terms ON people USING gin (location_terms)');
  // Look-ups by the enrichment match rules: email, LinkedIn URL, name (+ company).
  await knex.raw('CREATE INDEX people_work_email_lower ON people (lower(work_email))');
  await knex.raw('CREATE INDEX people_linkedin_url_lower ON people (lower(linkedin_url))');
  await knex.raw('CREATE INDEX people_name_lower ON people (lower(last_name), lower(first_name))');

  // One row per (workspace, person, data option) ever revealed: a reveal is charged once.
  await knex.schema.createTable('people_reveals', (t) => {
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('person_id').notNullable().references('people.id').onDelete('CASCADE');
    /** workEmailReveal | fullContactAndCompany | mobilePhoneReveal */
    t.text('data_option').notNullable();
    t.timestamp('revealed_at', { useTz: true }).notNullable();
    t.primary(['workspace_id', 'person_id', 'data_option']);
  });
  await knex.raw('CREATE INDEX people_reveals_person ON people_reveals (person_id)');

  // Companies seen with dataOptions "full" by a workspace: charged once, free to see again.
  await knex.schema.createTable('company_reveals', (t) => {
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('company_id').notNullable().references('companies.id').onDelete('CASCADE');
    t.timestamp('revealed_at', { useTz: true }).notNullable();
    t.primary(['workspace_id', 'company_id']);
  });
  await knex.raw('CREATE INDEX company_reveals_company ON company_reveals (company_id)');
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['company_reveals', 'people_reveals', 'people', 'companies']) {
    await knex.schema.dropTableIfExists(table);
  }
  await knex.raw('DROP FUNCTION IF EXISTS leads_words(text[])');
}
