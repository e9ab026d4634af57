import { useSearchParams } from 'react-router';

/** A list's filters and page, kept in the URL's query so that a view can be linked to and reloaded. */
export function useListParams(): {
  params: URLSearchParams;
  page: number;
  setPage: (page: number) => void;
  setFilters: (filters: Record<string, string>) => void;
} {
  const [params, setParams] = useSearchParams();
  const page = Math.max(1, Number(params.get('page') ?? 1) || 1);
  return {
    params,
    page,
    setPage: (next) =>
      setParams((current) => {
        const updated = new URLSearchParams(current);
        updated.set('page', String(next));
        return updated;
      }),
    setFilters: (filters) => setParams(new URLSearchParams(Object.entries(filters).filter(([, value]) => value !== ''))),
  };
}
