/**
 * What the people search, the company search and enrichment share: the search form with its text filters, filters
 * of several values and page size; the data options with their prices; a page of results with its pages.
 */
import type { FormEvent, ReactNode } from 'react';
import type { PeopleDataOption } from '../hooks/api/leads';
import { plural, usePrices } from '../components/Cost';
import { Choices } from '../components/Choices';
import { Empty, ErrorNotice } from '../components/states';
import { PEOPLE_DATA_OPTIONS, valuesOf } from '../vocabulary';

/** `a, b ,, c` as ['a', 'b', 'c']: a filter of several values typed in one field. */
export const commaList = (text: string): string[] =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** A filter left out of the request when it holds nothing. */
export const someOf = <T,>(values: T[]): T[] | undefined => (values.length ? values : undefined);

type TextKey<T> = { [K in keyof T]: T[K] extends string ? K : never }[keyof T];

/** A labelled text input per string field of a form's state, with an optional hint read with it. */
export function textFields<T>(prefix: string, state: T, setState: (state: T) => void) {
  return (name: TextKey<T>, label: string, hint?: string, type = 'text') => {
    const id = `${prefix}-${String(name)}`;
    return (
      <div className="field">
        <label htmlFor={id}>{label}</label>
        <input
          id={id}
          type={type}
          maxLength={2000}
          aria-describedby={hint ? `${id}-hint` : undefined}
          value={state[name] as string}
          onChange={(e) => setState({ ...state, [name]: e.target.value })}
        />
        {hint ? (
          <small id={`${id}-hint`} className="hint">
            {hint}
          </small>
        ) : null}
      </div>
    );
  };
}

type ChoiceKey<T> = { [K in keyof T]: T[K] extends string[] ? K : never }[keyof T];

/** A group of checkboxes per filter of several values (see Choices), bound to that field of a form's state. */
export function choiceFields<T>(state: T, setState: (state: T) => void) {
  return <K extends ChoiceKey<T>>(name: K, legend: string, words: Record<Extract<T[K], string[]>[number], string>) => (
    <Choices
      legend={legend}
      words={words}
      chosen={state[name] as Extract<T[K], string[]>[number][]}
      onChange={(chosen) => setState({ ...state, [name]: chosen })}
    />
  );
}

/** A search form: text filters, filters of several values and the page size, searched with nothing revealed. */
export function SearchForm({
  prefix,
  title,
  hint,
  fields,
  choices,
  perPage,
  onPerPage,
  pending,
  error,
  onSearch,
}: {
  prefix: string;
  title: string;
  hint: string;
  fields: ReactNode;
  choices: ReactNode;
  perPage: number;
  onPerPage: (perPage: number) => void;
  pending: boolean;
  error: unknown;
  onSearch: () => void;
}) {
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onSearch();
  };
  return (
    <>
      <form onSubmit={submit} aria-labelledby={`${prefix}-search-title`}>
        <h2 id={`${prefix}-search-title`}>{title}</h2>
        <p className="hint">{hint}</p>
        <div className="grid">{fields}</div>
        <div className="row">
          {choices}
          <div className="field">
            <label htmlFor={`${prefix}-per-page`}>Per page</label>
            <select id={`${prefix}-per-page`} value={perPage} onChange={(e) => onPerPage(Number(e.target.value))}>
              {[10, 25, 50, 100].map((n) => (
                <option key={n} value={n}>
                  {n}
                </option>
              ))}
            </select>
          </div>
        </div>
        <button type="submit" disabled={pending}>
          {pending ? 'Searching…' : 'Search'}
        </button>
      </form>
      <ErrorNotice error={error} />
    </>
  );
}

/** The data options of a people search or an enrichment, each with its price on this deployment. */
export function DataOptions({
  chosen,
  onChange,
  legend,
}: {
  chosen: PeopleDataOption[];
  onChange: (chosen: PeopleDataOption[]) => void;
  legend: string;
}) {
  const pricing = usePrices();
  return (
    <fieldset className="reveal">
      <legend>{legend}</legend>
      {valuesOf(PEOPLE_DATA_OPTIONS).map((o) => (
        <label key={o} className="check">
          <input
            type="checkbox"
            checked={chosen.includes(o)}
            onChange={(e) => onChange(e.target.checked ? [...chosen, o] : chosen.filter((x) => x !== o))}
          />{' '}
          {PEOPLE_DATA_OPTIONS[o]}
          {pricing ? ` (${plural(pricing.prices[o], 'credit')} each)` : ''}
        </label>
      ))}
    </fieldset>
  );
}

/** A page of search results: how many were found, the rows, the pages, and what can be done with them. */
export function SearchResults({
  id,
  title,
  noun,
  nothing,
  pagination,
  page,
  onPage,
  table,
  children,
}: {
  id: string;
  title: string;
  noun: [string, string];
  nothing: string;
  pagination: { totalEntries: number; totalPages: number };
  page: number;
  onPage: (page: number) => void;
  table: ReactNode;
  children: ReactNode;
}) {
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {pagination.totalEntries === 0 ? (
        <Empty>{nothing}</Empty>
      ) : (
        <>
          <p role="status">
            {plural(pagination.totalEntries, ...noun)} found; page {page} of {pagination.totalPages}.
          </p>
          {table}
          <nav className="pager" aria-label="Result pages">
            <button type="button" disabled={page <= 1} onClick={() => onPage(page - 1)}>
              Previous
            </button>
            <button type="button" disabled={page >= pagination.totalPages} onClick={() => onPage(page + 1)}>
              Next
            </button>
          </nav>
          {children}
        </>
      )}
    </section>
  );
}
