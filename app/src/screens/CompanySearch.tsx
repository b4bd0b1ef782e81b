/**
 * Company search: `basic` (identity fields, free) shows who matches; `full` for the page is a second request whose
 * most possible cost is shown first (a company seen in full before is free again).
 */
import { useState, type FormEvent } from 'react';
import { useFindCompanies, type CompanySearch, type LeadCompany } from '../hooks/api/leads';
import { Choices } from '../components/Choices';
import { CostNotice, plural, usePrices } from '../components/Cost';
import { Empty, ErrorNotice } from '../components/states';
import { useCan } from '../session';
import { EMPLOYEE_RANGES } from '../vocabulary';
import { SaveToList } from './SaveToList';
import { PageSize, SearchPager, Selectable, commaList, someOf, textFields } from './search-parts';

const NO_FILTERS = {
  names: '',
  domains: '',
  industries: '',
  locations: '',
  keywords: '',
  technologies: '',
  employeeRanges: [] as NonNullable<CompanySearch['employeeRanges']>,
  perPage: 25,
};
type Filters = typeof NO_FILTERS;
type Body = Omit<CompanySearch, 'dataOptions'>;

const bodyOf = (f: Filters): Body => ({
  names: someOf(commaList(f.names)),
  domains: someOf(commaList(f.domains)),
  industries: someOf(commaList(f.industries)),
  locations: someOf(commaList(f.locations)),
  keywords: f.keywords.trim() || undefined,
  technologies: someOf(commaList(f.technologies)),
  employeeRanges: someOf(f.employeeRanges),
  perPage: f.perPage,
});

export function CompanySearchPanel() {
  const [filters, setFilters] = useState(NO_FILTERS);
  const [asked, setAsked] = useState<{ body: Body; page: number } | null>(null);
  const [selected, setSelected] = useState<string[]>([]);
  const preview = useFindCompanies();
  const full = useFindCompanies();
  const pricing = usePrices();
  const canSave = useCan('lists:write');
  const look = (body: Body, page: number) => {
    setAsked({ body, page });
    setSelected([]);
    full.reset();
    preview.mutate({ body: { ...body, page, dataOptions: ['basic'] } });
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    look(bodyOf(filters), 1);
  };
  const text = textFields('company', filters, setFilters);
  const answer = full.data ?? preview.data;
  const companies = answer?.data.items ?? [];
  // Whether a company has more than its identity fields shows only in full, so every company on the page counts.
  const most = pricing ? (preview.data?.data.items.length ?? 0) * pricing.prices.companyFull : null;
  return (
    <>
      <form onSubmit={submit} aria-labelledby="company-search-title">
        <h2 id="company-search-title">Search companies</h2>
        <p className="hint">Searching shows the companies&apos; names, domains and places, and is free.</p>
        <div className="grid">
          {text('names', 'Company names', 'Separate several with commas')}
          {text('domains', 'Domains')}
          {text('industries', 'Industries')}
          {text('locations', 'Locations', 'City, state or country')}
          {text('keywords', 'Keywords')}
          {text('technologies', 'Technologies')}
        </div>
        <div className="row">
          <Choices
            legend="Company size"
            words={EMPLOYEE_RANGES}
            chosen={filters.employeeRanges}
            onChange={(employeeRanges) => setFilters({ ...filters, employeeRanges })}
          />
          <PageSize
            id="company-per-page"
            value={filters.perPage}
            onChange={(perPage) => setFilters({ ...filters, perPage })}
          />
        </div>
        <button type="submit" disabled={preview.isPending}>
          {preview.isPending ? 'Searching…' : 'Search'}
        </button>
      </form>
      <ErrorNotice error={preview.error} />
      {answer && asked ? (
        <section aria-labelledby="company-results-title">
          <h2 id="company-results-title">Companies found</h2>
          {companies.length === 0 ? (
            <Empty>No company matches these filters.</Empty>
          ) : (
            <>
              <p role="status">
                {plural(answer.data.pagination.totalEntries, 'company', 'companies')} found; page {asked.page} of{' '}
                {answer.data.pagination.totalPages}.
              </p>
              <CompanyTable companies={companies} selected={selected} onSelect={setSelected} />
              <SearchPager
                label="Result pages"
                page={asked.page}
                pages={answer.data.pagination.totalPages}
                onPage={(page) => look(asked.body, page)}
              />
              <div className="reveal">
                <CostNotice
                  most={most}
                  what={`Showing the ${plural(companies.length, 'company', 'companies')} on this page in full`}
                />
                <button
                  type="button"
                  disabled={full.isPending}
                  onClick={() => full.mutate({ body: { ...asked.body, page: asked.page, dataOptions: ['full'] } })}
                >
                  {most === null ? 'Show in full' : `Show in full for at most ${plural(most, 'credit')}`}
                </button>
                {full.data ? (
                  <p role="status">
                    Charged {plural(full.data.data.credits.used, 'credit')};{' '}
                    {plural(full.data.data.credits.remaining, 'credit')} left.
                  </p>
                ) : null}
                <ErrorNotice error={full.error} />
              </div>
              {canSave ? <SaveToList kind="company" ids={selected} /> : null}
            </>
          )}
        </section>
      ) : null}
    </>
  );
}

function CompanyTable({
  companies,
  selected,
  onSelect,
}: {
  companies: LeadCompany[];
  selected: string[];
  onSelect: (ids: string[]) => void;
}) {
  return (
    <Selectable
      caption="Companies found"
      items={companies}
      selected={selected}
      onSelect={onSelect}
      columns={['Name', 'Domain', 'Industry', 'Location', 'Employees']}
      row={(i) => {
        const c = companies[i];
        return [
          c.name,
          c.domain ?? '',
          c.industry ?? '',
          [c.city, c.country].filter(Boolean).join(', '),
          c.revealed ? (c.employeeCount?.toLocaleString() ?? 'not known') : 'in full only',
        ];
      }}
    />
  );
}
