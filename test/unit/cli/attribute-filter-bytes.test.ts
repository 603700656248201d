import { expect, test } from 'vitest';
import { attributeFilter } from '../../../src/cli/row-filters.js';
import { spanRows } from '../../../src/reader.js';
import { kv, traces } from '../../support/otlp-json-requests.js';

// `--attribute k=<base64>` on a bytes attribute (docs/reading.md, Spans and log records): a row
// holds bytes as standard padded base64 text, the same as a string of that text, so the filter
// cannot tell one from the other: it matches the text, and a bytes value is given as rows show it.

const [row] = spanRows(
  traces({
    attributes: [
      kv('url_safe', { bytesValue: 'aG-_' }),
      kv('unpadded', { bytesValue: 'aGk' }),
      kv('text', { stringValue: 'aG-_' }),
    ],
  }),
);
const matches = (spec: string) => attributeFilter([spec])(row?.attributes ?? {}, {});

test('a bytes value stored URL-safe or unpadded is matched in standard padded base64', () => {
  expect(row?.attributes).toEqual({ url_safe: 'aG+/', unpadded: 'aGk=', text: 'aG-_' });
  expect([matches('url_safe=aG+/'), matches('unpadded=aGk=')]).toEqual([true, true]);
  expect([matches('url_safe=aG-_'), matches('unpadded=aGk')]).toEqual([false, false]);
  expect(matches('unpadded=aGk*')).toBe(true);
});

test('a string of the same text is matched as it is: no filter value is rewritten', () => {
  expect([matches('text=aG-_'), matches('text=aG+/')]).toEqual([true, false]);
});
