import { describe, expect, test } from 'vitest';
import {
  anyValue,
  attributes,
  dataPointRows,
  logRecordRows,
  type OtlpObject,
  type OtlpValue,
  spanRows,
} from '../../../src/reader.js';
import {
  decodeProblem,
  kv,
  LOGS,
  logs,
  METRICS,
  metrics,
  readAsWritten,
  TRACES,
  traces,
} from '../../support/otlp-json-requests.js';

// Hand-written OTLP/JSON requests of each signal whose attribute value (or log body) is a
// boolValue that is no JSON boolean, a stringValue that is no string or a bytesValue that is no
// base64 text. Before: a boolValue "true" read as false, a stringValue 5 as '', a bytesValue
// "!!" as the base64 text "!!". A bool or string refused here is one @bufbuild/protobuf's
// fromJson refuses ("expected boolean, got \"true\"", "expected string, got 5"); bytes are
// what Go's protojson decodes: standard base64, or URL-safe when the text has - or _, padded
// when its length is a multiple of 4 (@bufbuild/protobuf also takes "aG=" and spaces).

const BOOL = 'a bool: true or false';
const STRING = 'a string';
const BYTES = 'bytes: base64 text, standard or URL-safe, padded or not';

const bool = (v: unknown) => ({ boolValue: v });
const string = (v: unknown) => ({ stringValue: v });
const bytes = (v: unknown) => ({ bytesValue: v });

const CASES: [string, string, OtlpObject, string][] = [
  [
    'metrics: a point attribute bool as text',
    METRICS,
    metrics([kv('ok', bool('true'))]),
    `metric "m": attribute "ok" boolValue "true" is not ${BOOL}`,
  ],
  [
    'metrics: a point attribute string as a number',
    METRICS,
    metrics([kv('code', string(5))]),
    `metric "m": attribute "code" stringValue 5 is not ${STRING}`,
  ],
  [
    'metrics: a resource attribute bool as a number',
    METRICS,
    metrics([], [kv('b', bool(1))]),
    `resource attribute "b" boolValue 1 is not ${BOOL}`,
  ],
  [
    'metrics: a scope attribute bytes not base64',
    METRICS,
    metrics([], [], [kv('x', bytes('!!'))]),
    `scope attribute "x" bytesValue "!!" is not ${BYTES}`,
  ],
  [
    'metrics: in a list in a map',
    METRICS,
    metrics([
      kv('outer', {
        kvlistValue: {
          values: [kv('inner', { arrayValue: { values: [bool(true), bool('no')] } })],
        },
      }),
    ]),
    `metric "m": attribute "outer"."inner"[1] boolValue "no" is not ${BOOL}`,
  ],
  [
    'traces: a span attribute string as a bool',
    TRACES,
    traces({ attributes: [kv('s', string(true))] }),
    `span "op": attribute "s" stringValue true is not ${STRING}`,
  ],
  [
    'traces: a resource attribute bytes as a number',
    TRACES,
    traces({}, [kv('r', bytes(5))]),
    `resource attribute "r" bytesValue 5 is not ${BYTES}`,
  ],
  [
    'traces: an event attribute bool "false"',
    TRACES,
    traces({ events: [{ name: 'e', attributes: [kv('n', bool('false'))] }] }),
    `span "op": event "e" attribute "n" boolValue "false" is not ${BOOL}`,
  ],
  [
    'traces: a link attribute string as an object',
    TRACES,
    traces({ links: [{ traceId: '', attributes: [kv('l', string({}))] }] }),
    `span "op": link attribute "l" stringValue {} is not ${STRING}`,
  ],
  [
    'logs: an attribute bytes of one character too many',
    LOGS,
    logs({ attributes: [kv('a', { arrayValue: { values: [bytes('aGk=a')] } })] }),
    `log record: attribute "a"[0] bytesValue "aGk=a" is not ${BYTES}`,
  ],
  [
    'logs: an attribute bytes of both alphabets',
    LOGS,
    logs({ attributes: [kv('m', bytes('aG+_'))] }),
    `log record: attribute "m" bytesValue "aG+_" is not ${BYTES}`,
  ],
  [
    'logs: an attribute bytes padded short',
    LOGS,
    logs({ attributes: [kv('p', bytes('aG='))] }),
    `log record: attribute "p" bytesValue "aG=" is not ${BYTES}`,
  ],
  [
    'logs: the body string as a number',
    LOGS,
    logs({ body: string(12) }),
    `log record: body stringValue 12 is not ${STRING}`,
  ],
  [
    'logs: in a body map',
    LOGS,
    logs({ body: { kvlistValue: { values: [kv('k', bytes('not base64'))] } } }),
    `log record: body."k" bytesValue "not base64" is not ${BYTES}`,
  ],
  [
    'logs: a scope attribute bool as a list',
    LOGS,
    logs({}, [kv('v', bool([]))]),
    `scope attribute "v" boolValue [] is not ${BOOL}`,
  ],
];

describe('a bool, string or bytes attribute value of another kind: the object is refused, naming it', () => {
  test.each(CASES)('%s', (_, key, r, message) => {
    expect(decodeProblem(key, r)).toBe(`${key}: ${message}`);
  });

  test('the row functions throw the same, instead of a wrong value', () => {
    expect(() => dataPointRows(metrics([kv('k', bool('true'))]))).toThrow(
      `metric "m": attribute "k" boolValue "true" is not ${BOOL}`,
    );
    expect(() => spanRows(traces({ attributes: [kv('k', string(5))] }))).toThrow(
      `attribute "k" stringValue 5 is not ${STRING}`,
    );
    expect(() => logRecordRows(logs({ body: bytes('a') }))).toThrow(
      `body bytesValue "a" is not ${BYTES}`,
    );
    expect(() => attributes([kv('k', bool('true'))] as OtlpValue)).toThrow(
      `attribute "k" boolValue "true" is not ${BOOL}`,
    );
    expect(() => anyValue(string(5) as OtlpValue)).toThrow(`stringValue 5 is not ${STRING}`);
  });
});

describe('what OTLP/JSON writers write is read as before', () => {
  // Protobuf's JSON mapping, as @bufbuild/protobuf's fromJson and Go's protojson read it: a
  // bool as true or false, a string as text, bytes as standard or URL-safe base64 with or without
  // padding ('' is no bytes); null for a field's default (false, '', no bytes). Rows show bytes
  // in standard padded base64, as from protobuf ("aGk" is "aGk=", "aG-_" is "aG+/").
  const values = [
    kv('t', bool(true)),
    kv('f', bool(false)),
    kv('bnull', bool(null)),
    kv('s', string('x')),
    kv('empty', string('')),
    kv('snull', string(null)),
    kv('b64', bytes('aGk=')),
    kv('unpadded', bytes('aGk')),
    kv('urlsafe', bytes('aG-_')),
    kv('nobytes', bytes('')),
    kv('bytesnull', bytes(null)),
    kv('list', { arrayValue: { values: [bool(true), string('y'), bytes('AAEC')] } }),
  ];
  const expected = {
    t: true,
    f: false,
    bnull: false,
    s: 'x',
    empty: '',
    snull: '',
    b64: 'aGk=',
    unpadded: 'aGk=',
    urlsafe: 'aG+/',
    nobytes: '',
    bytesnull: '',
    list: [true, 'y', 'AAEC'],
  };

  readAsWritten(values, expected);

  test('a log body of one value', () => {
    expect(logRecordRows(logs({ body: bool(false) }))[0]?.body).toBe(false);
  });
});
