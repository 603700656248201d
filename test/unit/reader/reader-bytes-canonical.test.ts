import { ProtobufLogsSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import { describe, expect, test } from 'vitest';
import { otlpKeyTexts, otlpValueText } from '../../../src/parquet/attribute-text.js';
import {
  anyValue,
  decodeStoredObject,
  logRecordRows,
  type OtlpObject,
} from '../../../src/reader.js';
import { valueText } from '../../../src/signals/plain-values.js';

// The same bytes in an OTLP/JSON object spelled URL-safe or without padding (which proto3's JSON
// mapping accepts) and in an OTLP/protobuf object written by the official serializer. Before, the
// JSON object's rows and Parquet texts kept the text as written ("aG-_", "aGk") while the
// protobuf object's gave standard padded base64 ("aG+/", "aGk=").

const ID = '0190a6c4-8f00-7000-8000-000000000000';
const hoq = new Uint8Array([0x68, 0x6f, 0xbf]); // standard "aG+/", URL-safe "aG-_"
const hi = new Uint8Array([0x68, 0x69]); // "aGk=", unpadded "aGk"

/** A logs request as OTLP/JSON: body `hoq`, attributes b (`hi`) and list ([`hoq`, `hi`]). */
function jsonRequest(hoqText: string, hiText: string): OtlpObject {
  return {
    resourceLogs: [
      {
        resource: { attributes: [] },
        scopeLogs: [
          {
            scope: { name: 's' },
            logRecords: [
              {
                timeUnixNano: '1700000000000000000',
                observedTimeUnixNano: '1700000000000000000',
                body: { bytesValue: hoqText },
                attributes: [
                  { key: 'b', value: { bytesValue: hiText } },
                  {
                    key: 'list',
                    value: {
                      arrayValue: {
                        values: [{ bytesValue: hoqText }, { bytesValue: hiText }],
                      },
                    },
                  },
                ],
              },
            ],
          },
        ],
      },
    ],
  } as OtlpObject;
}

/** The same request written by the official OTLP protobuf serializer. */
function protoBytes(): Uint8Array {
  const record = {
    hrTime: [1_700_000_000, 0],
    hrTimeObserved: [1_700_000_000, 0],
    body: hoq,
    attributes: { b: hi, list: [hoq, hi] },
    droppedAttributesCount: 0,
    resource: { attributes: {} },
    instrumentationScope: { name: 's' },
  } as unknown as ReadableLogRecord;
  const bytes = ProtobufLogsSerializer.serializeRequest([record]);
  if (bytes === undefined) throw new Error('the official serializer wrote nothing');
  return bytes;
}

const rowsOfJson = (r: OtlpObject) =>
  logRecordRows(decodeStoredObject(`p/logs_${ID}.json`, Buffer.from(JSON.stringify(r))).request);

describe('bytes: one spelling whatever the input', () => {
  const fromProto = logRecordRows(decodeStoredObject(`p/logs_${ID}.binpb`, protoBytes()).request);

  test('the protobuf object gives standard padded base64 (what the serializer wrote)', () => {
    expect(fromProto[0]?.body).toBe('aG+/');
    expect(fromProto[0]?.attributes).toEqual({ b: 'aGk=', list: ['aG+/', 'aGk='] });
  });

  test.each([
    ['URL-safe, unpadded', 'aG-_', 'aGk'],
    ['standard, padded', 'aG+/', 'aGk='],
  ])('a JSON object with %s bytes reads as the protobuf one', (_, hoqText, hiText) => {
    const rows = rowsOfJson(jsonRequest(hoqText, hiText));
    expect(rows[0]?.body).toBe(fromProto[0]?.body);
    expect(rows[0]?.attributes).toEqual(fromProto[0]?.attributes);
    expect(valueText(rows[0]?.attributes.list)).toBe(valueText(fromProto[0]?.attributes.list));
    expect(valueText(rows[0]?.attributes.list)).toBe('["aG+/","aGk="]');
    expect(anyValue({ bytesValue: hiText })).toBe('aGk=');
  });

  test('the Parquet texts of a JSON object (compaction) are the standard spelling', () => {
    expect(otlpValueText({ bytesValue: 'aG-_' })).toBe('aG+/');
    const attributes = [
      { key: 'b', value: { bytesValue: 'aGk' } },
      { key: 'list', value: { arrayValue: { values: [{ bytesValue: 'aG-_' }] } } },
    ];
    expect(otlpKeyTexts(attributes).texts).toEqual(['aGk=', '["aG+/"]']);
  });
});
