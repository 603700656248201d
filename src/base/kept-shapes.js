// @ts-check
// V8 gives the instances of a class a shape (a hidden class) and compiles the methods that run
// on them for it. When a full garbage collection finds no instance of a shape left, it drops the
// shape, and every function compiled for it is thrown away ("embedded weak objects cleared"):
// the next instances get a new shape, and their functions run unoptimized and compile again.
// A batch's objects (its column store, the writer of its file) are all gone between two
// batches, so a full collection there cost the exporter its compiled code each time: measured on
// a batch of 10,000 spans with a full collection before each, 10.2 µs a span against 7.3 with
// none (docs/performance.md, "Compiled code that outlives a batch"). One small instance of each
// such class, kept for the life of the process, keeps its shape.

/** @type {object[]} */
const kept = [];

/**
 * Keeps `instance` (a small one, made for this) for the life of the process; returns it.
 * @template {object} T
 * @param {T} instance
 * @returns {T}
 */
export function keepShape(instance) {
  kept.push(instance);
  return instance;
}
