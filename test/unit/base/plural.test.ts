import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { plural } from '../../../src/base/log.js';

describe('plural()', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('groups the digits of any integer as en-US does', () => {
    // Expected: Intl's own en-US grouping of the same number.
    const intl = new Intl.NumberFormat('en-US');
    fc.assert(
      fc.property(fc.integer({ min: -(2 ** 53) + 1, max: 2 ** 53 - 1 }), (n) => {
        expect(plural(n, 'byte')).toBe(`${intl.format(n)} ${n === 1 ? 'byte' : 'bytes'}`);
      }),
    );
    expect(plural(1, 'batch', 'batches')).toBe('1 batch');
    expect(plural(481_573, 'byte')).toBe('481,573 bytes');
  });

  it('does not reach Intl for an integer (its first use in a process loads ICU)', () => {
    // An exporter's deadline alert formats byte counts: the first toLocaleString() of a process
    // took 120-340 ms on a loaded machine and held every exporter's deadline timer back.
    const toLocale = vi.spyOn(Number.prototype, 'toLocaleString');
    plural(481_573, 'byte');
    expect(toLocale).not.toHaveBeenCalled();
  });
});
