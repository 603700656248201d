// @ts-check
// Parquet's page headers and file footer (FileMetaData), in Thrift's compact protocol, with the
// field ids of parquet-format's parquet.thrift.
import { structBytes } from './thrift.js';

/** @typedef {import('./thrift.js').Field} Field */
/** @typedef {import('hyparquet').SchemaElement} SchemaElement */
/** @typedef {import('./statistics.js').Statistics} Statistics */

const TYPES = ['BOOLEAN', 'INT32', 'INT64', 'INT96', 'FLOAT', 'DOUBLE', 'BYTE_ARRAY'];
const REPETITIONS = ['REQUIRED', 'OPTIONAL', 'REPEATED'];
const CONVERTED = { UTF8: 0, MAP: 1, LIST: 3, TIMESTAMP_MICROS: 10 };
export const CODEC = /** @type {const} */ ({ UNCOMPRESSED: 0, GZIP: 2, ZSTD: 6 });
const PAGE = { DATA: 0, DICTIONARY: 2 };
const RLE = 3;
const PLAIN = 0;

/** @param {string} name @param {readonly string[]} names */
const enumOf = (name, names) => {
  const i = names.indexOf(name);
  if (i < 0) throw new Error(`Parquet: no such enum value ${name}`);
  return i;
};

/** TimeUnit, a union: MICROS 2, NANOS 3. */
const TIME_UNITS = { MICROS: 2, NANOS: 3 };

/** LogicalType, a union: STRING 1, MAP 2, LIST 3, TIMESTAMP 8 (unit: TIME_UNITS). @param {SchemaElement['logical_type']} t @returns {Field[] | undefined} */
function logicalType(t) {
  if (t === undefined) return undefined;
  if (t.type === 'STRING') return [[1, 'struct', []]];
  if (t.type === 'MAP') return [[2, 'struct', []]];
  if (t.type === 'LIST') return [[3, 'struct', []]];
  if (t.type === 'TIMESTAMP' && (t.unit === 'MICROS' || t.unit === 'NANOS')) {
    return [
      [
        8,
        'struct',
        [
          [1, 'bool', t.isAdjustedToUTC],
          [2, 'struct', [[TIME_UNITS[t.unit], 'struct', []]]],
        ],
      ],
    ];
  }
  throw new Error(`Parquet: logical type ${t.type} is not written here`);
}

/** @param {SchemaElement} e @returns {Field[]} */
const schemaElement = (e) => [
  [1, 'i32', e.type === undefined ? undefined : enumOf(e.type, TYPES)],
  [3, 'i32', e.repetition_type === undefined ? undefined : enumOf(e.repetition_type, REPETITIONS)],
  [4, 'binary', e.name],
  [5, 'i32', e.num_children],
  [
    6,
    'i32',
    e.converted_type === undefined
      ? undefined
      : CONVERTED[/** @type {keyof typeof CONVERTED} */ (e.converted_type)],
  ],
  [10, 'struct', logicalType(e.logical_type)],
];

/**
 * A data page's header (version 1: levels in the page, RLE) or a dictionary page's (PLAIN;
 * `is_sorted` only when its values are in order).
 * @param {{ dictionary: boolean, values: number, encoding: number, rawSize: number, size: number, sorted?: boolean }} page
 */
export function pageHeader(page) {
  return structBytes([
    [1, 'i32', page.dictionary ? PAGE.DICTIONARY : PAGE.DATA],
    [2, 'i32', page.rawSize],
    [3, 'i32', page.size],
    [
      5,
      'struct',
      page.dictionary
        ? undefined
        : [
            [1, 'i32', page.values],
            [2, 'i32', page.encoding],
            [3, 'i32', RLE],
            [4, 'i32', RLE],
          ],
    ],
    [
      7,
      'struct',
      page.dictionary
        ? [
            [1, 'i32', page.values],
            [2, 'i32', PLAIN],
            [3, 'bool', page.sorted === true ? true : undefined],
          ]
        : undefined,
    ],
  ]);
}

/**
 * @typedef {object} ChunkMeta
 * @property {string} type physical type
 * @property {number[]} encodings
 * @property {string[]} path
 * @property {number} codec
 * @property {number} values
 * @property {number} rawSize
 * @property {number} size
 * @property {number} start file offset of its first page
 * @property {number} dataOffset
 * @property {number | undefined} dictionaryOffset
 * @property {Statistics | undefined} statistics
 * @property {{ bytes: Uint8Array } | { offset: number, length: number }} [bloomFilter] its bloom
 *   filter's header and bitset until they are written, then where
 */

/**
 * The longest min or max value a chunk's statistics hold. Both are left out (the null count
 * kept) where either is longer: each is a whole value, and a string of megabytes would make the
 * footer as large, past what a reader takes (the reader's MAX_FOOTER_BYTES, 16 MiB). So a
 * string chunk's statistics are at most 2 × 256 bytes, on the order of its other metadata.
 */
export const MAX_STATISTICS_VALUE_BYTES = 256;

/** @param {Uint8Array | undefined} value */
const fits = (value) => value === undefined || value.length <= MAX_STATISTICS_VALUE_BYTES;

/** @param {Statistics | undefined} s @returns {Field[] | undefined} */
const statistics = (s) =>
  s && [
    [3, 'i64', s.nulls],
    ...(fits(s.max) && fits(s.min)
      ? /** @type {Field[]} */ ([
          [5, 'binary', s.max],
          [6, 'binary', s.min],
        ])
      : []),
  ];

/** Where a chunk's bloom filter is in the file. @param {ChunkMeta} c */
function bloomWritten(c) {
  const filter = c.bloomFilter;
  if (filter === undefined) return undefined;
  if (!('offset' in filter)) throw new Error('Parquet: a bloom filter was not written');
  return filter;
}

/** @param {ChunkMeta} c @returns {Field[]} */
const columnChunk = (c) => [
  [2, 'i64', c.start],
  [
    3,
    'struct',
    [
      [1, 'i32', enumOf(c.type, TYPES)],
      [2, 'list', 'i32', c.encodings],
      [3, 'list', 'binary', c.path],
      [4, 'i32', c.codec],
      [5, 'i64', c.values],
      [6, 'i64', c.rawSize],
      [7, 'i64', c.size],
      [9, 'i64', c.dataOffset],
      [11, 'i64', c.dictionaryOffset],
      [12, 'struct', statistics(c.statistics)],
      [14, 'i64', bloomWritten(c)?.offset],
      [15, 'i32', bloomWritten(c)?.length],
    ],
  ],
];

/**
 * The FileMetaData's bytes. Every leaf column has TYPE_ORDER as its column order, so readers use
 * min_value/max_value (the only statistics fields written).
 * @param {{ schema: SchemaElement[], rows: number, groups: { rows: number, chunks: ChunkMeta[] }[], keyValues: { key: string, value: string }[], createdBy: string, leaves: number }} file
 */
export function footer(file) {
  return structBytes([
    [1, 'i32', 2],
    [2, 'list', 'struct', file.schema.map(schemaElement)],
    [3, 'i64', file.rows],
    [
      4,
      'list',
      'struct',
      file.groups.map((g) => [
        [1, 'list', 'struct', g.chunks.map(columnChunk)],
        [2, 'i64', g.chunks.reduce((n, c) => n + c.rawSize, 0)],
        [3, 'i64', g.rows],
        [5, 'i64', g.chunks[0]?.start ?? 0],
        [6, 'i64', g.chunks.reduce((n, c) => n + c.size, 0)],
      ]),
    ],
    [
      5,
      'list',
      'struct',
      file.keyValues.map((kv) => [
        [1, 'binary', kv.key],
        [2, 'binary', kv.value],
      ]),
    ],
    [6, 'binary', file.createdBy],
    [7, 'list', 'struct', Array.from({ length: file.leaves }, () => [[1, 'struct', []]])],
  ]);
}
