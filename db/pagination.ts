import type { Knex } from 'knex';

export interface PageRequest {
  page: number;
  limit: number;
}

export interface Page<Row> {
  rows: Row[];
  total: number;
}

/**
 * Runs a filtered query as one page, newest first with the id as a stable tie-break, plus its
 * total count, both read from one snapshot so that they agree.
 */
export async function fetchPage<Row>(db: Knex, query: Knex.QueryBuilder, { page, limit }: PageRequest): Promise<Page<Row>> {
  return db.transaction(
    async (trx) => {
      const [{ count }] = await query.clone().transacting(trx).clearSelect().clearOrder().count<{ count: number }[]>({ count: '*' });
      const rows = await query
        .clone()
        .transacting(trx)
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .limit(limit)
        .offset((page - 1) * limit);
      return { rows: rows as Row[], total: Number(count) };
    },
    { isolationLevel: 'repeatable read', readOnly: true },
  );
}
