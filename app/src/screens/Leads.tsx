/**
 * The lead database: people search (the section first shown), company search and enrichment. A search first runs
 * with nothing revealed, which is free, and shows who matches; revealing data of that page is a second request
 * whose most possible cost is shown before it is sent. Chosen results are saved to a list.
 */
import { useState, type FormEvent } from 'react';
import { useSearchPeople, type LeadPerson, type PeopleDataOption, type PeopleSearch } from '../hooks/api/leads';
import { Choices } from '../components/Choices';
import { CostNotice, plural, usePrices } from '../components/Cost';
import { Empty, ErrorNotice } from '../components/states';
import { SubNav } from '../components/SubNav';
import { useCan } from '../session';
import {
  DEPARTMENTS,
  EMAIL_STATUSES,
  EMPLOYEE_RANGES,
  PEOPLE_DATA_OPTIONS,
  SENIORITIES,
  valuesOf,
} from '../vocabulary';
import { CompanySearchPanel } from './CompanySearch';
import { EnrichPanel } from './Enrich';
import { SaveToList } from './SaveToList';
import { PageSize, SearchPager, Selectable, commaList, someOf, textFields } from './search-parts';

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
  const submit = (event: FormEvent) => {
    event.preventDefault();
    look(bodyOf(filters), 1);
  };
  const text = textFields('people', filters, setFilters);
  const answer = reveal.data ?? preview.data;
  const people = answer?.data.items ?? [];
  const most = pricing ? mostCost(preview.data?.data.items ?? [], options, pricing.prices) : null;
  return (
    <>
      <form onSubmit={submit} aria-labelledby="people-search-title">
        <h2 id="people-search-title">Search people</h2>
        <p className="hint">Searching shows who matches and reveals nothing, so it is free.</p>
        <div className="grid">
          {text('titles', 'Job titles', 'Separate several with commas: sales director, head of growth')}
          {text('keywords', 'Keywords')}
          {text('locations', 'Locations', 'City, state or country')}
          {text('companyDomains', 'Company domains')}
          {text('companyNames', 'Company names')}
          {text('industries', 'Industries')}
        </div>
        <div className="row">
          <Choices
            legend="Seniority"
            words={SENIORITIES}
            chosen={filters.seniorities}
            onChange={(seniorities) => setFilters({ ...filters, seniorities })}
          />
          <Choices
            legend="Department"
            words={DEPARTMENTS}
            chosen={filters.departments}
            onChange={(departments) => setFilters({ ...filters, departments })}
          />
          <Choices
            legend="Company size"
            words={EMPLOYEE_RANGES}
            chosen={filters.employeeRanges}
            onChange={(employeeRanges) => setFilters({ ...filters, employeeRanges })}
          />
          <Choices
            legend="Email status"
            words={EMAIL_STATUSES}
            chosen={filters.emailStatuses}
            onChange={(emailStatuses) => setFilters({ ...filters, emailStatuses })}
          />
          <PageSize
            id="people-per-page"
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
        <section aria-labelledby="people-results-title">
          <h2 id="people-results-title">People found</h2>
          {people.length === 0 ? (
            <Empty>Nobody matches these filters.</Empty>
          ) : (
            <>
              <p role="status">
                {plural(answer.data.pagination.totalEntries, 'person', 'people')} found; page {asked.page} of{' '}
                {answer.data.pagination.totalPages}.
              </p>
              <PeopleTable people={people} selected={selected} onSelect={setSelected} />
              <SearchPager
                label="Result pages"
                page={asked.page}
                pages={answer.data.pagination.totalPages}
                onPage={(page) => look(asked.body, page)}
              />
              <fieldset className="reveal">
                <legend>Reveal this page</legend>
                {valuesOf(PEOPLE_DATA_OPTIONS).map((o) => (
                  <label key={o} className="check">
                    <input
                      type="checkbox"
                      checked={options.includes(o)}
                      onChange={(e) => setOptions(e.target.checked ? [...options, o] : options.filter((x) => x !== o))}
                    />{' '}
                    {PEOPLE_DATA_OPTIONS[o]}
                    {pricing ? ` (${plural(pricing.prices[o], 'credit')} each)` : ''}
                  </label>
                ))}
                <CostNotice
                  most={most}
                  what={`Revealing them for the ${plural(people.length, 'person', 'people')} on this page`}
                />
                <button
                  type="button"
                  disabled={!options.length || reveal.isPending}
                  onClick={() => reveal.mutate({ body: { ...asked.body, page: asked.page, dataOptions: options } })}
                >
                  {most === null ? 'Reveal' : `Reveal for at most ${plural(most, 'credit')}`}
                </button>
                {reveal.data ? (
                  <p role="status">
                    Charged {plural(reveal.data.data.credits.used, 'credit')};{' '}
                    {plural(reveal.data.data.credits.remaining, 'credit')} left.
                  </p>
                ) : null}
                <ErrorNotice error={reveal.error} />
              </fieldset>
              {canSave ? <SaveToList kind="people" ids={selected} /> : null}
            </>
          )}
        </section>
      ) : null}
    </>
  );
}

const hidden = (known: boolean) => (known ? 'not revealed' : 'none known');

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
    <Selectable
      caption="People found"
      items={people.map((p) => ({ id: p.id, name: p.name }))}
      selected={selected}
      onSelect={onSelect}
      columns={['Name', 'Title', 'Company', 'Location', 'Email', 'Mobile']}
      row={(i) => {
        const p = people[i];
        const shows = (o: PeopleDataOption) => p.revealed.includes(o);
        return [
          p.name,
          p.title ?? '',
          p.company?.name ?? '',
          [p.city, p.country].filter(Boolean).join(', '),
          shows('workEmailReveal') ? (p.email ?? 'none known') : `${hidden(p.hasEmail)} (${p.emailStatus})`,
          shows('mobilePhoneReveal') ? (p.mobilePhone ?? 'none known') : hidden(p.hasMobilePhone),
        ];
      }}
    />
  );
}
