/**
 * The reader's entry, the CLI's, the compact command and the compactor (main.ts loads a command
 * when it runs it, the command the compactor where it runs), imported: what record-modules.mjs
 * must see them load.
 */
import '../../../src/reader.js';
import '../../../src/cli/main.js';
import '../../../src/cli/commands/compact.js';
import '../../../src/compact/compact-metrics.js';
import '../../../src/signals/metrics/parquet/encode.js';

console.log(JSON.stringify({ imported: true }));
