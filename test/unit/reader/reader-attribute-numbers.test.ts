import { describe, expect, test } from 'vitest';
import {
  anyValue,
  attributes,
  dataPointRows,
  decodeStoredObject,
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
import { decodeJsonExact } from '../../support/otlp-reference.js';

// Hand-written OTLP/JSON requests of each signal whose attribute value (or log body) is an
// intValue or doubleValue that holds no number. Before: each read as 0.

const INT = 'an int64: a whole number from -2^63 to 2^63 - 1, or its decimal text';
const DOUBLE = 'a double: a number, or its decimal text, NaN or ±Infinity';

const int = (v: unknown) => ({ intValue: v });
const double = (v: unknown) => ({ doubleValue: v });

const CASES: [string, string, OtlpObject, string][] = [
  [
    'metrics: a point attribute',
    METRICS,
    metrics([kv('k', int('abc'))]),
    `metric "m": attribute "k" intValue "abc" is not ${INT}`,
  ],
  [
    'metrics: a point attribute double',
    METRICS,
    metrics([kv('ratio', double('abc'))]),
    `metric "m": attribute "ratio" doubleValue "abc" is not ${DOUBLE}`,
  ],
  [
    'metrics: a resource attribute',
    METRICS,
    metrics([], [kv('host.cpus', int(true))]),
    `resource attribute "host.cpus" intValue true is not ${INT}`,
  ],
  [
    'metrics: a scope attribute',
    METRICS,
    metrics([], [], [kv('x', double({}))]),
    `scope attribute "x" doubleValue {} is not ${DOUBLE}`,
  ],
  [
    'metrics: in a list in a map',
    METRICS,
    metrics([
      kv('outer', {
        kvlistValue: { values: [kv('inner', { arrayValue: { values: [int('1'), int('x')] } })] },
      }),
    ]),
    `metric "m": attribute "outer"."inner"[1] intValue "x" is not ${INT}`,
  ],
  [
    'traces: a span attribute',
    TRACES,
    traces({ attributes: [kv('http.status_code', int('abc'))] }),
    `span "op": attribute "http.status_code" intValue "abc" is not ${INT}`,
  ],
  [
    'traces: a resource attribute',
    TRACES,
    traces({}, [kv('r', double('0x10'))]),
    `resource attribute "r" doubleValue "0x10" is not ${DOUBLE}`,
  ],
  [
    'traces: an event attribute',
    TRACES,
    traces({ events: [{ name: 'e', attributes: [kv('n', int('NaN'))] }] }),
    `span "op": event "e" attribute "n" intValue "NaN" is not ${INT}`,
  ],
  [
    'traces: a link attribute',
    TRACES,
    traces({ links: [{ traceId: '', attributes: [kv('l', double('1,5'))] }] }),
    `span "op": link attribute "l" doubleValue "1,5" is not ${DOUBLE}`,
  ],
  [
    'logs: an attribute',
    LOGS,
    logs({ attributes: [kv('a', { arrayValue: { values: [double('x')] } })] }),
    `log record: attribute "a"[0] doubleValue "x" is not ${DOUBLE}`,
  ],
  [
    'logs: the body',
    LOGS,
    logs({ body: int('abc') }),
    `log record: body intValue "abc" is not ${INT}`,
  ],
  [
    'logs: in a body map',
    LOGS,
    logs({ body: { kvlistValue: { values: [kv('k', double(false))] } } }),
    `log record: body."k" doubleValue false is not ${DOUBLE}`,
  ],
  [
    'logs: a scope attribute',
    LOGS,
    logs({}, [kv('v', int('Infinity'))]),
    `scope attribute "v" intValue "Infinity" is not ${INT}`,
  ],
];

/** A metrics request: gauge `m` of one point, with an exemplar of `filtered` attributes. */
const withExemplar = (filtered: unknown[]): OtlpObject => {
  const exemplar = { asDouble: 2, filteredAttributes: filtered };
  const point = { asInt: '1', exemplars: [exemplar] };
  const metric = { name: 'm', gauge: { dataPoints: [point] } };
  return { resourceMetrics: [{ scopeMetrics: [{ metrics: [metric] }] }] } as OtlpObject;
};

describe('an exemplar attribute value that is not of its kind: the object is refused too', () => {
  // Exemplars are in no row (nor in the Parquet tables), but their filteredAttributes are
  // KeyValues like any other: the protobuf decoder gives values of their kinds only, so an
  // OTLP/JSON object holding another is refused alike. Before: read, the value unchecked.
  test.each([
    [[kv('k', int('abc'))], `exemplar attribute "k" intValue "abc" is not ${INT}`],
    [[kv('k', int(1.5))], `exemplar attribute "k" intValue 1.5 is not ${INT}`],
    [
      [kv('ok', int('2')), kv('m', { kvlistValue: { values: [kv('d', double('x'))] } })],
      `exemplar attribute "m"."d" doubleValue "x" is not ${DOUBLE}`,
    ],
    [
      [kv('b', { boolValue: 'true' })],
      'exemplar attribute "b" boolValue "true" is not a bool: true or false',
    ],
  ])('%j', (filtered, message) => {
    const r = withExemplar(filtered);
    expect(decodeProblem(METRICS, r)).toBe(`${METRICS}: metric "m": ${message}`);
    expect(() => dataPointRows(r)).toThrow(`metric "m": ${message}`);
  });

  test('good exemplar attributes are read', () => {
    const r = withExemplar([kv('k', int('7')), kv('s', { stringValue: 'x' })]);
    expect(decodeProblem(METRICS, r)).toBe('read');
    expect(dataPointRows(r)[0]?.value).toBe(1);
  });
});

describe('an int or double attribute value that is no number: the object is refused, naming it', () => {
  test.each(CASES)('%s', (_, key, r, message) => {
    expect(decodeProblem(key, r)).toBe(`${key}: ${message}`);
  });

  test('the row functions throw the same, instead of a value of 0', () => {
    expect(() => dataPointRows(metrics([kv('k', int('abc'))]))).toThrow(
      `metric "m": attribute "k" intValue "abc" is not ${INT}`,
    );
    expect(() => spanRows(traces({ attributes: [kv('k', double('abc'))] }))).toThrow(
      `attribute "k" doubleValue "abc" is not ${DOUBLE}`,
    );
    expect(() => logRecordRows(logs({ body: int('abc') }))).toThrow(
      `body intValue "abc" is not ${INT}`,
    );
    expect(() => attributes([kv('k', int('abc'))] as OtlpValue)).toThrow(
      `attribute "k" intValue "abc" is not ${INT}`,
    );
    expect(() => anyValue(double('abc') as OtlpValue)).toThrow(
      `doubleValue "abc" is not ${DOUBLE}`,
    );
  });
});

describe('an intValue past what a double holds (1e999): JSON.parse makes it Infinity', () => {
  // No writer spells an int64 so (opentelemetry-js writes a non-integer number as a doubleValue,
  // and JSON.stringify writes Infinity as null); it is no int64, as "Infinity" is not.
  const raw = (v: string) =>
    Buffer.from(
      JSON.stringify(traces({ attributes: [kv('n', int('HUGE'))] })).replace('"HUGE"', v),
    );

  test.each([
    ['1e999', 'Infinity'],
    ['-1e999', '-Infinity'],
  ])('%s is refused, the message naming it %s', (v, named) => {
    expect(() => decodeStoredObject(TRACES, raw(v))).toThrow(
      `${TRACES}: span "op": attribute "n" intValue ${named} is not ${INT}`,
    );
  });
});

/** The request's first point attribute's intValue as the reference reads the JSON text. */
function referenceInt(text: string): unknown {
  const canonical = decodeJsonExact(text) as {
    resourceMetrics: {
      scopeMetrics: {
        metrics: { gauge: { dataPoints: { attributes: { value: { intValue?: string } }[] }[] } }[];
      }[];
    }[];
  };
  return canonical.resourceMetrics[0]?.scopeMetrics[0]?.metrics[0]?.gauge.dataPoints[0]
    ?.attributes[0]?.value.intValue;
}

describe('an intValue that is no int64 (not whole, or outside -2^63 to 2^63 - 1) is refused', () => {
  // proto3's JSON mapping: an int64 is a whole number in range, as a JSON number or as decimal
  // text. @bufbuild/protobuf's fromJson (decodeJsonExact, a runtime that passes the protobuf
  // conformance suite) refuses each of these, "1e3" and "1.0" included (text with an exponent or
  // a point), and reads a JSON number 1e0 as 1 (below). Before: each was read (1.5, 1000). A
  // whole JSON number past the range (1e20) is read (below): opentelemetry-js writes one.
  test.each([
    1.5,
    -0.5,
    '1.5',
    '1.0',
    '1e3',
    '9223372036854775808',
    '-9223372036854775809',
    '99999999999999999999',
  ])('%j', (v) => {
    const r = metrics([kv('k', int(v))]);
    expect(() => decodeJsonExact(JSON.stringify(r))).toThrow('(int64)');
    expect(decodeProblem(METRICS, r)).toBe(
      `${METRICS}: metric "m": attribute "k" intValue ${JSON.stringify(v)} is not ${INT}`,
    );
    expect(() => attributes([kv('k', int(v))] as OtlpValue)).toThrow(`intValue`);
  });

  // The row: a number while it is exact, else the decimal text; a JSON number past 2^53 has
  // lost its digits in JSON.parse already (-2^63 is a double).
  test.each([
    ['1e0', '1', 1],
    ['1.0e1', '10', 10],
    ['"007"', '7', 7],
    ['"9223372036854775807"', '9223372036854775807', '9223372036854775807'],
    ['"-9223372036854775808"', '-9223372036854775808', '-9223372036854775808'],
    ['-9223372036854775808', '-9223372036854775808', -(2 ** 63)],
  ])('%s is read, as the reference reads it (%s)', (v, reference, row) => {
    const text = JSON.stringify(metrics([kv('k', int('HERE'))])).replace('"HERE"', v);
    expect(referenceInt(text)).toBe(reference);
    const { request } = decodeStoredObject(METRICS, Buffer.from(text));
    expect(dataPointRows(request)[0]?.attributes).toEqual({ k: row });
  });
});

describe('what OTLP/JSON writers write is read as before', () => {
  // Protobuf's JSON mapping: int64 as decimal text or a number; doubles as numbers or text,
  // with "NaN", "Infinity", "-Infinity"; null for a field's default. opentelemetry-js writes
  // JavaScript numbers as they are (an integer past 2^63 as 1e+21, NaN and infinities as null):
  // the reference refuses 1e+21 as an int64, and this reader takes it, as it is written.
  const values = [
    kv('big', int('9007199254740993')),
    kv('n', int(42)),
    kv('neg', int('-7')),
    kv('huge', int(1e21)),
    kv('inull', int(null)),
    kv('nan', double('NaN')),
    kv('inf', double('Infinity')),
    kv('ninf', double('-Infinity')),
    kv('d', double(1.5)),
    kv('dtext', double('2.5')),
    kv('dnull', double(null)),
    kv('list', { arrayValue: { values: [int('3'), double('-Infinity')] } }),
  ];
  const expected = {
    big: '9007199254740993',
    n: 42,
    neg: -7,
    huge: 1e21,
    inull: 0,
    nan: Number.NaN,
    inf: Number.POSITIVE_INFINITY,
    ninf: Number.NEGATIVE_INFINITY,
    d: 1.5,
    dtext: 2.5,
    dnull: 0,
    list: [3, Number.NEGATIVE_INFINITY],
  };

  readAsWritten(values, expected);

  test('a log body of one value', () => {
    expect(decodeProblem(LOGS, logs({ body: int('12') }))).toBe('read');
    expect(logRecordRows(logs({ body: double('NaN') }))[0]?.body).toBe(Number.NaN);
  });
});
