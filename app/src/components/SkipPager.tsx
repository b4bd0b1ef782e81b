/** Previous and Next over a list read by `limit` and `skip`, with where this page sits in the whole. */
export function SkipPager({
  label,
  skip,
  limit,
  shown,
  pagination,
  onSkip,
}: {
  label: string;
  skip: number;
  limit: number;
  /** Rows on this page. */
  shown: number;
  pagination: { total: number; hasMore: boolean };
  onSkip: (skip: number) => void;
}) {
  return (
    <nav className="pager" aria-label={label}>
      <button type="button" disabled={skip === 0} onClick={() => onSkip(Math.max(0, skip - limit))}>
        Previous
      </button>
      <span>
        {skip + 1}–{skip + shown} of {pagination.total}
      </span>
      <button type="button" disabled={!pagination.hasMore} onClick={() => onSkip(skip + limit)}>
        Next
      </button>
    </nav>
  );
}
