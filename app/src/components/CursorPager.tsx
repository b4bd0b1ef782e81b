/**
 * Previous and Next over pages read by cursor: `cursors` holds the cursor of each page before this one, so
 * Previous goes back the way Next came (a cursor API gives only the next page's cursor).
 */
export function CursorPager({
  label,
  cursors,
  onCursors,
  pagination,
  names = ['Previous', 'Next'],
}: {
  label: string;
  cursors: string[];
  onCursors: (cursors: string[]) => void;
  pagination: { hasMore: boolean; nextCursor?: string | null };
  names?: [string, string];
}) {
  const next = pagination.hasMore ? pagination.nextCursor : null;
  return (
    <nav className="pager" aria-label={label}>
      <button type="button" disabled={!cursors.length} onClick={() => onCursors(cursors.slice(0, -1))}>
        {names[0]}
      </button>
      <button type="button" disabled={!next} onClick={() => next && onCursors([...cursors, next])}>
        {names[1]}
      </button>
    </nav>
  );
}
