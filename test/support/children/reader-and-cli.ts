/** The reader's entry and the CLI's, imported: what record-modules.mjs must see them load. */
import '../../../src/reader.js';
import '../../../src/cli/main.js';
import '../../../src/signals/metrics/parquet/encode.js';

console.log(JSON.stringify({ imported: true }));
