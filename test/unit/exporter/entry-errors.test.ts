import { expect, test } from 'vitest';
import * as exporter from '../../../src/index.js';
import { ObjectTooLargeError } from '../../../src/reader/read-limits.js';
import * as reader from '../../../src/reader.js';
import { SpoolLockedError } from '../../../src/spool/lock.js';

// The errors the docs tell users to expect can be told apart with instanceof: each is the class
// the code throws, exported from the entry a user meets it through.
test('SpoolLockedError is exported from the exporter entry', () => {
  expect((exporter as Record<string, unknown>).SpoolLockedError).toBe(SpoolLockedError);
});

test('ObjectTooLargeError is exported from the reader entry', () => {
  expect((reader as Record<string, unknown>).ObjectTooLargeError).toBe(ObjectTooLargeError);
});
