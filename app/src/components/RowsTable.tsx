import type { ReactNode } from 'react';

/**
 * A table of rows; with `selected`, a checkbox per row (named after the row) and one for the whole page.
 */
export function RowsTable({
  caption,
  items,
  selected,
  onSelect,
  columns,
  row,
}: {
  caption: string;
  items: { id: string; name: string }[];
  selected?: string[];
  onSelect?: (ids: string[]) => void;
  columns: string[];
  row: (index: number) => ReactNode[];
}) {
  const choosing = selected && onSelect;
  const all = items.length > 0 && items.every((i) => selected?.includes(i.id));
  return (
    <div className="table-wrap" tabIndex={0}>
      <table>
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {choosing ? (
              <th scope="col">
                <input
                  type="checkbox"
                  aria-label="Select every row of this page"
                  checked={all}
                  onChange={(e) => onSelect(e.target.checked ? items.map((i) => i.id) : [])}
                />
              </th>
            ) : null}
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
              {choosing ? (
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
              ) : null}
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
