import type { Schemas } from '../api/client';

/** Page links as the API pages: by page number, with the total it reports. */
export function Pagination({ pagination, onPage }: { pagination: Schemas['Pagination']; onPage: (page: number) => void }) {
  const { page, pages, total, has_more } = pagination;
  if (total === 0) return null;
  return (
    <nav className="pagination" aria-label="Pages">
      <button type="button" onClick={() => onPage(page - 1)} disabled={page <= 1}>
        Previous
      </button>
      <span>
        Page {page} of {Math.max(pages, 1)} · {total} in all
      </span>
      <button type="button" onClick={() => onPage(page + 1)} disabled={!has_more}>
        Next
      </button>
    </nav>
  );
}
