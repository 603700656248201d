// @ts-check
// The metrics' ParquetFileWriter: the shared writer (src/parquet/file-writer.js) bound to the
// metrics' table (schema.js, leaves.js, plan.js). The compactor writes files of many runs with it.
import { TableFileWriter } from '../../../parquet/file-writer.js';
import { LEAVES } from './leaves.js';
import { planSteps } from './plan.js';
import { ROW_GROUP_ROWS, SCHEMA, SCHEMA_VERSION, SCHEMA_VERSION_KEY } from './schema.js';

export { CREATED_BY } from '../../../parquet/file-writer.js';

/** @typedef {import('../../../parquet/file-writer.js').FileWriterOptions} FileWriterOptions */
/** @typedef {import('../../../parquet/file-writer.js').KeyValue} KeyValue */

/** @type {import('../../../parquet/file-writer.js').ParquetTable<import('./sealed.js').SealedColumns, import('./plan.js').Plan>} */
export const METRICS_TABLE = {
  schema: SCHEMA,
  leaves: LEAVES,
  plan: planSteps,
  rowGroupRows: ROW_GROUP_ROWS,
  versionKey: SCHEMA_VERSION_KEY,
  version: SCHEMA_VERSION,
};

/** @extends {TableFileWriter<import('./sealed.js').SealedColumns, import('./plan.js').Plan>} */
export class ParquetFileWriter extends TableFileWriter {
  /** @param {FileWriterOptions} options */
  constructor(options) {
    super(METRICS_TABLE, options);
  }
}
