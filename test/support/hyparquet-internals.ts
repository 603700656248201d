// Two internals of hyparquet, an independent Parquet reader, for what its public API does not
// give: a page header as written (a dictionary page's is_sorted), and PLAIN values.
// @ts-expect-error hyparquet ships no types for its internal modules
import { parquetHeader as header } from '../../node_modules/hyparquet/src/column.js';
// @ts-expect-error as above
import { readPlain as plain } from '../../node_modules/hyparquet/src/plain.js';

/** Where a reader stands in a file's bytes; both functions move `offset` past what they read. */
export interface DataReader {
  view: DataView;
  offset: number;
}

export const parquetHeader = header as (reader: DataReader) => {
  type: string;
  dictionary_page_header?: { num_values: number; is_sorted?: boolean };
};

export const readPlain = plain as (
  reader: DataReader,
  type: string,
  count: number,
  fixedLength: number | undefined,
) => ArrayLike<unknown>;
