import type { Knex } from 'knex';

export interface PageRequest {
  page: number;
  limit: number;
}

export interface Page<Row> {
  rows: Row[];
  total: number;
}

/** Runs a filtered query as one page, newest first with the id as a stable tie-break, plus its total count. */
export async function fetchPage<Row>(query: Knex.QueryBuilder, { page, limit }: PageRequest): Promise<Page<Row>> {
  const [{ count }] = await query.clone().clearSelect().clearOrder().count<{ count: number }[]>({ count: '*' });
  const rows = await query
    .clone()
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(limit)
    .offset((page - 1) * limit);
  return { rows: rows as Row[], total: Number(count) };
}
