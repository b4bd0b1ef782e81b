/**
 * A table of rows under named columns, as the screens list campaigns, accounts, keys, contacts, leads, ... Its box
 * scrolls sideways on a narrow screen and is focusable, so a keyboard can scroll it too. A virtual list
 * (VirtualTable) hands it only the rows in view, with the room the others take above and below them. With
 * `selection`, each row has a checkbox named after it, and the header one for every row shown.
 */
import type { HTMLAttributes, ReactNode, Ref } from 'react';

type RowProps = HTMLAttributes<HTMLTableRowElement> & { ref?: Ref<HTMLTableRowElement>; 'data-index'?: number };

export interface Column<T> {
  header: string;
  cell: (row: T) => ReactNode;
}

export interface DataTableProps<T> {
  caption: string;
  /** Shown above the table; otherwise the caption is for screen readers only. */
  showCaption?: boolean;
  columns: readonly Column<T>[];
  rows: readonly T[];
  rowKey: (row: T, position: number) => string | number;
  selection?: {
    selected: readonly string[];
    onSelect: (ids: string[]) => void;
    id: (row: T) => string;
    /** How the row's checkbox is named to a screen reader. */
    name: (row: T) => string;
  };
  /** A virtual list's window: its scrolling box, the rows' attributes, and the height of the rows left out. */
  virtual?: {
    box: Ref<HTMLDivElement>;
    rowCount: number;
    rowProps: (row: T, position: number) => RowProps;
    above: number;
    below: number;
  };
}

export function DataTable<T>({ caption, showCaption, columns, rows, rowKey, selection, virtual }: DataTableProps<T>) {
  // Room for the rows a virtual list leaves out, so the scroll bar stands for the whole list.
  const spacer = (height: number) =>
    height > 0 ? (
      <tr aria-hidden="true" style={{ height }}>
        <td colSpan={columns.length + (selection ? 1 : 0)} />
      </tr>
    ) : null;
  const ids = selection ? rows.map(selection.id) : [];
  const all = ids.length > 0 && ids.every((id) => selection?.selected.includes(id));
  return (
    <div className={virtual ? 'table-wrap virtual' : 'table-wrap'} tabIndex={0} ref={virtual?.box}>
      <table aria-rowcount={virtual?.rowCount}>
        <caption className={showCaption ? undefined : 'visually-hidden'}>{caption}</caption>
        <thead>
          <tr aria-rowindex={virtual ? 1 : undefined}>
            {selection ? (
              <th scope="col">
                <input
                  type="checkbox"
                  aria-label="Select every row of this page"
                  checked={all}
                  onChange={(e) => selection.onSelect(e.target.checked ? ids : [])}
                />
              </th>
            ) : null}
            {columns.map((c) => (
              <th scope="col" key={c.header}>
                {c.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {spacer(virtual?.above ?? 0)}
          {rows.map((row, position) => (
            <tr key={rowKey(row, position)} {...virtual?.rowProps(row, position)}>
              {selection ? (
                <td>
                  <input
                    type="checkbox"
                    aria-label={`Select ${selection.name(row)}`}
                    checked={selection.selected.includes(ids[position])}
                    onChange={(e) =>
                      selection.onSelect(
                        e.target.checked
                          ? [...selection.selected, ids[position]]
                          : selection.selected.filter((id) => id !== ids[position]),
                      )
                    }
                  />
                </td>
              ) : null}
              {columns.map((c) => (
                <td key={c.header}>{c.cell(row)}</td>
              ))}
            </tr>
          ))}
          {spacer(virtual?.below ?? 0)}
        </tbody>
      </table>
    </div>
  );
}
