/**
 * A table of rows under named columns, as the screens list campaigns, accounts, keys, contacts, ... Its box
 * scrolls sideways on a narrow screen and is focusable, so a keyboard can scroll it too. A virtual list
 * (VirtualTable) hands it only the rows in view, with the room the others take above and below them.
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
  /** A virtual list's window: its scrolling box, the rows' attributes, and the height of the rows left out. */
  virtual?: {
    box: Ref<HTMLDivElement>;
    rowCount: number;
    rowProps: (row: T, position: number) => RowProps;
    above: number;
    below: number;
  };
}

export function DataTable<T>({ caption, showCaption, columns, rows, rowKey, virtual }: DataTableProps<T>) {
  // Room for the rows a virtual list leaves out, so the scroll bar stands for the whole list.
  const spacer = (height: number) =>
    height > 0 ? (
      <tr aria-hidden="true" style={{ height }}>
        <td colSpan={columns.length} />
      </tr>
    ) : null;
  return (
    <div className={virtual ? 'table-wrap virtual' : 'table-wrap'} tabIndex={0} ref={virtual?.box}>
      <table aria-rowcount={virtual?.rowCount}>
        <caption className={showCaption ? undefined : 'visually-hidden'}>{caption}</caption>
        <thead>
          <tr aria-rowindex={virtual ? 1 : undefined}>
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
