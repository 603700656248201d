import { REQUEST } from '../encoding/otlp-schema.js';
import {
  type ExportTally,
  jsonRecords,
  protoRecords,
  type RecordFormat,
} from '../encoding/records.js';
import type { Format } from '../layout/formats.js';
import type { FlatRowsRequest } from './flat-rows-request.js';
import { type Scoped, splitByResource } from './otlp-groups.js';
import type { SignalExport, SignalName } from './signal.js';

/** The parts of a signal's rows that are the same for every signal: the OTLP formats. */

type Encode<Item> = (item: Item, tally?: ExportTally) => Buffer;

/** A signal's records per format: its OTLP/JSON and protobuf encoders; Parquet's fallback's. */
export function otlpRecords<Item>(
  signal: SignalName,
  json: Encode<Item>,
  proto: Encode<Item>,
): Readonly<Record<Format, RecordFormat<Item>>> {
  const jsonFormat = jsonRecords(REQUEST[signal].listField, json);
  return { 'otlp-json': jsonFormat, 'otlp-proto': protoRecords(proto), parquet: jsonFormat };
}

/**
 * The row of a signal whose exports are lists of items, each with its resource (spans, log
 * records), as an exporter sees them: its OTLP encoders, then its Parquet column builders and the
 * readers of its flat table (the fallback's), each loaded on first use.
 */
export function scopedItemsExport<T extends Scoped>(
  signal: SignalName,
  { json, proto }: { json: Encode<readonly T[]>; proto: Encode<readonly T[]> },
  loadColumns: SignalExport<readonly T[]>['loadColumns'],
  loadRows: () => Promise<FlatRowsRequest>,
): SignalExport<readonly T[]> {
  return {
    name: signal,
    recordsRepeat: false,
    records: otlpRecords(signal, json, proto),
    splitByResource,
    resourceAttributes: (list) => list[0]?.resource.attributes ?? {},
    loadColumns,
    columnsAsRecords: async (columns) => (await loadRows()).sealedAsRecords(columns),
  };
}
