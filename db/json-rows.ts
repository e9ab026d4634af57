/**
 * Many rows inserted through one JSON parameter: a bulk of 1,000 messages binds one value
 * instead of one per column per row, which Knex would list (18,000 placeholders) and the server
 * would parse one by one.
 */

/** The columns the rows give, in the order of the first row that names each. */
export function columnsOf(rows: object[]): string[] {
  const columns = new Set<string>();
  for (const row of rows) for (const column of Object.keys(row)) columns.add(column);
  return [...columns];
}

/**
 * `INSERT INTO table (columns) SELECT columns FROM json_populate_recordset(...)` of the one
 * parameter `$1` of a prepared statement (a JSON array of the rows): each value is read as its
 * column's type, and a column that no row gives takes its default. Column names come from code,
 * never from input.
 */
export function insertFromJson(table: string, columns: string[]): string {
  const list = columns.map((column) => `"${column}"`).join(', ');
  return `INSERT INTO ${table} (${list}) SELECT ${list} FROM json_populate_recordset(NULL::${table}, $1::json)`;
}
