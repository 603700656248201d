import { DuckDBInstance } from '@duckdb/node-api';

/**
 * The rows of one DuckDB query in a fresh in-memory database, as plain JSON values. Nothing may
 * be downloaded (httpfs cannot be fetched here): the tests read local files, such as a mirror of
 * the bucket; the extensions they use (csv, json, parquet) are built in.
 */
export async function duckdbRows(sql: string): Promise<Record<string, unknown>[]> {
  const db = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false' });
  const connection = await db.connect();
  try {
    return (await connection.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[];
  } finally {
    connection.closeSync();
    db.closeSync();
  }
}
