import type { Knex } from 'knex';

export interface PageRequest {
  page: number;
  limit: number;
}

export interface Page<Row> {
  rows: Row[];
  total: number;
}

/** Newest first, with the id as a stable tie-break: every list's order. */
export const NEWEST_FIRST: { column: string; order: 'desc' }[] = [
  { column: 'created_at', order: 'desc' },
  { column: 'id', order: 'desc' },
];

/**
 * Reads a page and its total in one statement: one snapshot, so that they agree, in one round
 * trip. `rows` is the page's query (its rows have `created_at` and `id`); `total` answers one
 * row whose `n` is the total, handed back whole as `totalRow` for any other figure it carries.
 */
export async function readPage<Row>(db: Knex, rows: Knex.QueryBuilder, total: Knex.QueryBuilder): Promise<Page<Row> & { totalRow: Record<string, unknown> }> {
  const result = await db.raw<{ rows: (Row & { id: unknown; page_total: Record<string, unknown> })[] }>(
    `WITH page AS ?, total AS ?
     SELECT to_jsonb(total) AS page_total, page.* FROM total LEFT JOIN page ON true
     ORDER BY page.created_at DESC, page.id DESC`,
    [rows, total],
  );
  const [{ page_total: totalRow }] = result.rows;
  // An empty page still answers the total's row, with nulls for the page's columns.
  const pageRows = result.rows.filter((row) => row.id !== null).map(({ page_total, ...row }) => row as unknown as Row);
  return { rows: pageRows, total: Number(totalRow.n), totalRow };
}

/** A page of a filtered query, newest first, and its total count. */
export async function fetchPage<Row>(db: Knex, query: Knex.QueryBuilder, { page, limit }: PageRequest): Promise<Page<Row>> {
  const rows = query
    .clone()
    .orderBy(NEWEST_FIRST)
    .limit(limit)
    .offset((page - 1) * limit);
  const { rows: pageRows, total } = await readPage<Row>(db, rows, query.clone().clearSelect().clearOrder().count({ n: '*' }));
  return { rows: pageRows, total };
}
