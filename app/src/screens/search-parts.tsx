/** What the people search, the company search and enrichment share: text filters, page size, pages, a selectable table. */
import type { ReactNode } from 'react';

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

export function PageSize({ id, value, onChange }: { id: string; value: number; onChange: (perPage: number) => void }) {
  return (
    <div className="field">
      <label htmlFor={id}>Per page</label>
      <select id={id} value={value} onChange={(e) => onChange(Number(e.target.value))}>
        {[10, 25, 50, 100].map((n) => (
          <option key={n} value={n}>
            {n}
          </option>
        ))}
      </select>
    </div>
  );
}

export function SearchPager({
  label,
  page,
  pages,
  onPage,
}: {
  label: string;
  page: number;
  pages: number;
  onPage: (page: number) => void;
}) {
  return (
    <nav className="pager" aria-label={label}>
      <button type="button" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        Previous
      </button>
      <button type="button" disabled={page >= pages} onClick={() => onPage(page + 1)}>
        Next
      </button>
    </nav>
  );
}

/** A table of results with a checkbox per row (named after the row) and one for the whole page. */
export function Selectable({
  caption,
  items,
  selected,
  onSelect,
  columns,
  row,
}: {
  caption: string;
  items: { id: string; name: string }[];
  selected: string[];
  onSelect: (ids: string[]) => void;
  columns: string[];
  row: (index: number) => ReactNode[];
}) {
  const all = items.length > 0 && items.every((i) => selected.includes(i.id));
  return (
    <div className="table-wrap" tabIndex={0}>
      <table>
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">
              <input
                type="checkbox"
                aria-label="Select every row of this page"
                checked={all}
                onChange={(e) => onSelect(e.target.checked ? items.map((i) => i.id) : [])}
              />
            </th>
            {columns.map((c) => (
              <th scope="col" key={c}>
                {c}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {items.map((item, index) => (
            <tr key={item.id}>
              <td>
                <input
                  type="checkbox"
                  aria-label={`Select ${item.name}`}
                  checked={selected.includes(item.id)}
                  onChange={(e) =>
                    onSelect(e.target.checked ? [...selected, item.id] : selected.filter((id) => id !== item.id))
                  }
                />
              </td>
              {row(index).map((cell, c) => (
                <td key={c}>{cell}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
