/**
 * Company search: `basic` (identity fields, free) shows who matches; `full` for the page is a second request whose
 * most possible cost is shown first (a company seen in full before is free again).
 */
import { useState } from 'react';
import { useFindCompanies, type CompanySearch, type LeadCompany } from '../hooks/api/leads';
import { Spend, plural, usePrices } from '../components/Cost';
import { DataTable } from '../components/DataTable';
import { useCan } from '../session';
import { EMPLOYEE_RANGES } from '../vocabulary';
import { SaveToList } from './SaveToList';
import { SearchForm, SearchResults, choiceFields, commaList, someOf, textFields } from './search-parts';

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
  const text = textFields('company', filters, setFilters);
  const choice = choiceFields(filters, setFilters);
  const answer = full.data ?? preview.data;
  const companies = answer?.data.items ?? [];
  // Whether a company has more than its identity fields shows only in full, so every company on the page counts.
  const most = pricing ? (preview.data?.data.items.length ?? 0) * pricing.prices.companyFull : null;
  return (
    <>
      <SearchForm
        prefix="company"
        title="Search companies"
        hint="Searching shows the companies' names, domains and places, and is free."
        fields={
          <>
            {text('names', 'Company names', 'Separate several with commas')}
            {text('domains', 'Domains')}
            {text('industries', 'Industries')}
            {text('locations', 'Locations', 'City, state or country')}
            {text('keywords', 'Keywords')}
            {text('technologies', 'Technologies')}
          </>
        }
        choices={choice('employeeRanges', 'Company size', EMPLOYEE_RANGES)}
        perPage={filters.perPage}
        onPerPage={(perPage) => setFilters({ ...filters, perPage })}
        pending={preview.isPending}
        error={preview.error}
        onSearch={() => look(bodyOf(filters), 1)}
      />
      {answer && asked ? (
        <SearchResults
          id="company-results-title"
          title="Companies found"
          noun={['company', 'companies']}
          nothing="No company matches these filters."
          pagination={answer.data.pagination}
          page={asked.page}
          onPage={(page) => look(asked.body, page)}
          table={<CompanyTable companies={companies} selected={selected} onSelect={setSelected} />}
        >
          <div className="reveal">
            <Spend
              most={most}
              what={`Showing the ${plural(companies.length, 'company', 'companies')} on this page in full`}
              action="Show in full"
              onSpend={() => full.mutate({ body: { ...asked.body, page: asked.page, dataOptions: ['full'] } })}
              pending={full.isPending}
              charged={full.data?.data.credits}
              error={full.error}
            />
          </div>
          {canSave ? <SaveToList kind="company" ids={selected} /> : null}
        </SearchResults>
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
    <DataTable
      caption="Companies found"
      columns={[
        { header: 'Name', cell: (c) => c.name },
        { header: 'Domain', cell: (c) => c.domain },
        { header: 'Industry', cell: (c) => c.industry },
        { header: 'Location', cell: (c) => [c.city, c.country].filter(Boolean).join(', ') },
        {
          header: 'Employees',
          cell: (c) => (c.revealed ? (c.employeeCount?.toLocaleString() ?? 'not known') : 'in full only'),
        },
      ]}
      rows={companies}
      rowKey={(c) => c.id}
      selection={{ selected, onSelect, id: (c) => c.id, name: (c) => c.name }}
    />
  );
}
