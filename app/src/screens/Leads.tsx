/**
 * The lead database: people search (the section first shown), company search and enrichment. A search first runs
 * with nothing revealed, which is free, and shows who matches; revealing data of that page is a second request
 * whose most possible cost is shown before it is sent. Chosen results are saved to a list.
 */
import { useState } from 'react';
import { useSearchPeople, type LeadPerson, type PeopleDataOption, type PeopleSearch } from '../hooks/api/leads';
import { Spend, plural, usePrices } from '../components/Cost';
import { DataTable } from '../components/DataTable';
import { SubNav } from '../components/SubNav';
import { useCan } from '../session';
import { DEPARTMENTS, EMAIL_STATUSES, EMPLOYEE_RANGES, SENIORITIES } from '../vocabulary';
import { CompanySearchPanel } from './CompanySearch';
import { EnrichPanel } from './Enrich';
import { SaveToList } from './SaveToList';
import { DataOptions, SearchForm, SearchResults, choiceFields, commaList, someOf, textFields } from './search-parts';

const SECTIONS = [
  { path: '', label: 'People' },
  { path: 'companies', label: 'Companies' },
  { path: 'enrich', label: 'Enrich' },
];

export function Leads({ section = '' }: { section?: string }) {
  return (
    <section aria-labelledby="leads-title">
      <h1 id="leads-title">Leads</h1>
      <SubNav label="Lead database" screen="leads" sections={SECTIONS} current={section} />
      {section === 'companies' ? (
        <CompanySearchPanel />
      ) : section === 'enrich' ? (
        <EnrichPanel />
      ) : (
        <PeopleSearchPanel />
      )}
    </section>
  );
}

const NO_FILTERS = {
  titles: '',
  keywords: '',
  locations: '',
  companyDomains: '',
  companyNames: '',
  industries: '',
  seniorities: [] as NonNullable<PeopleSearch['seniorities']>,
  departments: [] as NonNullable<PeopleSearch['departments']>,
  employeeRanges: [] as NonNullable<PeopleSearch['employeeRanges']>,
  emailStatuses: [] as NonNullable<PeopleSearch['emailStatuses']>,
  perPage: 25,
};
type Filters = typeof NO_FILTERS;

const bodyOf = (f: Filters): PeopleSearch => ({
  titles: someOf(commaList(f.titles)),
  keywords: f.keywords.trim() || undefined,
  locations: someOf(commaList(f.locations)),
  companyDomains: someOf(commaList(f.companyDomains)),
  companyNames: someOf(commaList(f.companyNames)),
  industries: someOf(commaList(f.industries)),
  seniorities: someOf(f.seniorities),
  departments: someOf(f.departments),
  employeeRanges: someOf(f.employeeRanges),
  emailStatuses: someOf(f.emailStatuses),
  perPage: f.perPage,
});

/**
 * The most revealing `options` of `people` can cost. Whether a person has a LinkedIn URL shows only once it is
 * revealed, so `fullContactAndCompany` counts everyone.
 */
const mostCost = (people: LeadPerson[], options: PeopleDataOption[], prices: Record<PeopleDataOption, number>) =>
  people.reduce(
    (sum, p) =>
      sum +
      options.reduce((s, o) => {
        const known = o === 'workEmailReveal' ? p.hasEmail : o === 'mobilePhoneReveal' ? p.hasMobilePhone : true;
        return s + (known ? prices[o] : 0);
      }, 0),
    0,
  );

function PeopleSearchPanel() {
  const [filters, setFilters] = useState(NO_FILTERS);
  const [asked, setAsked] = useState<{ body: PeopleSearch; page: number } | null>(null);
  const [options, setOptions] = useState<PeopleDataOption[]>(['workEmailReveal']);
  const [selected, setSelected] = useState<string[]>([]);
  const preview = useSearchPeople();
  const reveal = useSearchPeople();
  const pricing = usePrices();
  const canSave = useCan('lists:write');
  const look = (body: PeopleSearch, page: number) => {
    setAsked({ body, page });
    setSelected([]);
    reveal.reset();
    preview.mutate({ body: { ...body, page, dataOptions: [] } });
  };
  const text = textFields('people', filters, setFilters);
  const choice = choiceFields(filters, setFilters);
  const answer = reveal.data ?? preview.data;
  const people = answer?.data.items ?? [];
  const most = pricing ? mostCost(preview.data?.data.items ?? [], options, pricing.prices) : null;
  return (
    <>
      <SearchForm
        prefix="people"
        title="Search people"
        hint="Searching shows who matches and reveals nothing, so it is free."
        fields={
          <>
            {text('titles', 'Job titles', 'Separate several with commas: sales director, head of growth')}
            {text('keywords', 'Keywords')}
            {text('locations', 'Locations', 'City, state or country')}
            {text('companyDomains', 'Company domains')}
            {text('companyNames', 'Company names')}
            {text('industries', 'Industries')}
          </>
        }
        choices={
          <>
            {choice('seniorities', 'Seniority', SENIORITIES)}
            {choice('departments', 'Department', DEPARTMENTS)}
            {choice('employeeRanges', 'Company size', EMPLOYEE_RANGES)}
            {choice('emailStatuses', 'Email status', EMAIL_STATUSES)}
          </>
        }
        perPage={filters.perPage}
        onPerPage={(perPage) => setFilters({ ...filters, perPage })}
        pending={preview.isPending}
        error={preview.error}
        onSearch={() => look(bodyOf(filters), 1)}
      />
      {answer && asked ? (
        <SearchResults
          id="people-results-title"
          title="People found"
          noun={['person', 'people']}
          nothing="Nobody matches these filters."
          pagination={answer.data.pagination}
          page={asked.page}
          onPage={(page) => look(asked.body, page)}
          table={<PeopleTable people={people} selected={selected} onSelect={setSelected} />}
        >
          <div className="reveal">
            <DataOptions legend="Reveal this page" chosen={options} onChange={setOptions} />
            <Spend
              most={most}
              what={`Revealing them for the ${plural(people.length, 'person', 'people')} on this page`}
              action="Reveal"
              onSpend={() => reveal.mutate({ body: { ...asked.body, page: asked.page, dataOptions: options } })}
              pending={reveal.isPending}
              disabled={!options.length}
              charged={reveal.data?.data.credits}
              error={reveal.error}
            />
          </div>
          {canSave ? <SaveToList kind="people" ids={selected} /> : null}
        </SearchResults>
      ) : null}
    </>
  );
}

const hidden = (known: boolean) => (known ? 'not revealed' : 'none known');
const shows = (p: LeadPerson, option: PeopleDataOption) => p.revealed.includes(option);

function PeopleTable({
  people,
  selected,
  onSelect,
}: {
  people: LeadPerson[];
  selected: string[];
  onSelect: (ids: string[]) => void;
}) {
  return (
    <DataTable
      caption="People found"
      columns={[
        { header: 'Name', cell: (p) => p.name },
        { header: 'Title', cell: (p) => p.title },
        { header: 'Company', cell: (p) => p.company?.name },
        { header: 'Location', cell: (p) => [p.city, p.country].filter(Boolean).join(', ') },
        {
          header: 'Email',
          cell: (p) =>
            shows(p, 'workEmailReveal') ? (p.email ?? 'none known') : `${hidden(p.hasEmail)} (${p.emailStatus})`,
        },
        {
          header: 'Mobile',
          cell: (p) => (shows(p, 'mobilePhoneReveal') ? (p.mobilePhone ?? 'none known') : hidden(p.hasMobilePhone)),
        },
      ]}
      rows={people}
      rowKey={(p) => p.id}
      selection={{ selected, onSelect, id: (p) => p.id, name: (p) => p.name }}
    />
  );
}
