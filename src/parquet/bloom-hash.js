// @ts-check
// xxHash64 with seed 0, the hash of Parquet's bloom filters (bloom-filter.js), from the
// xxhash-wasm package (WebAssembly: no native build, the same on every Node.js). Loaded by the
// first file that writes a bloom filter: spans' and log records' (in an exporter, by its body
// worker), never metrics'.

/** @typedef {(bytes: Uint8Array) => bigint} Hash64 xxHash64 (seed 0) of the bytes, unsigned */

/** @type {Promise<Hash64> | undefined} */
let loading;

/** The hash, loaded once. @returns {Promise<Hash64>} */
export function xxHash64() {
  loading ??= import('xxhash-wasm').then(
    async ({ default: create }) => {
      const { h64Raw } = await create();
      return (bytes) => h64Raw(bytes, 0n);
    },
    (error) => {
      loading = undefined;
      throw error;
    },
  );
  return loading;
}
