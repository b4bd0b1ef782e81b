/**
 * A table over a list too long to render whole (a workspace's 100k contacts): only the rows in view, and a few
 * around them, are in the DOM, measured as they render (@tanstack/react-virtual does the windowing), and
 * `onNearEnd` asks for the next page once the reader scrolls near the last row loaded. The list's length is
 * unknown until its last page (cursor pages carry no total), so the table says so to screen readers.
 */
import { useEffect, useRef } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import { DataTable, type Column } from './DataTable';

/** One line of text with the cells' padding and border, in px; rows are measured once they render. */
const ROW_HEIGHT = 37;
/** How many rows before the last loaded one the next page is asked for: two screens' worth. */
const NEAR_END = 40;

export function VirtualTable<T>({
  caption,
  showCaption,
  columns,
  rows,
  rowKey,
  complete,
  onNearEnd,
}: {
  caption: string;
  showCaption?: boolean;
  columns: readonly Column<T>[];
  rows: readonly T[];
  rowKey: (row: T) => string;
  /** True once the last page is loaded. */
  complete: boolean;
  onNearEnd?: () => void;
}) {
  const box = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => box.current,
    estimateSize: () => ROW_HEIGHT,
    getItemKey: (index) => rowKey(rows[index]),
    overscan: 10,
  });
  const items = virtualizer.getVirtualItems();
  const lastShown = items.at(-1)?.index ?? -1;
  useEffect(() => {
    if (!complete && lastShown >= rows.length - NEAR_END) onNearEnd?.();
  }, [complete, lastShown, rows.length, onNearEnd]);
  return (
    <DataTable
      caption={caption}
      showCaption={showCaption}
      columns={columns}
      rows={items.map((item) => rows[item.index])}
      rowKey={rowKey}
      virtual={{
        box,
        // The header row is row 1; -1 says the count is not known yet.
        rowCount: complete ? rows.length + 1 : -1,
        rowProps: (_row, position) => ({
          ref: virtualizer.measureElement,
          'data-index': items[position].index,
          'aria-rowindex': items[position].index + 2,
        }),
        above: items[0]?.start ?? 0,
        below: virtualizer.getTotalSize() - (items.at(-1)?.end ?? 0),
      }}
    />
  );
}
