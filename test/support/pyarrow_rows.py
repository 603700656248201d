"""Reads Parquet files with pyarrow and prints, per file, one JSON line: its rows with every value
spelled exactly (64-bit integers and timestamps in microseconds as decimal strings, doubles as the
hex of their IEEE 754 bits, maps as [key, value] pairs in order) and each row group's row count
and min/max statistics of the metrics' columns the writer promises them for (those the file has). Used by
test/integration/parquet-writer-engines.test.ts; arguments: the files."""

import json
import struct
import sys

import pyarrow as pa
import pyarrow.parquet as pq

STATISTICS = ["TimeUnix", "StartTimeUnix", "ServiceName", "MetricName"]


def double(v):
    return None if v is None else "x" + struct.pack("<d", v).hex()


def spell(value, arrow_type):
    if value is None:
        return None
    if pa.types.is_map(arrow_type):
        return [[k, spell(v, arrow_type.item_type)] for k, v in value]
    if pa.types.is_list(arrow_type):
        return [spell(v, arrow_type.value_type) for v in value]
    if pa.types.is_int64(arrow_type):
        return str(value)
    if pa.types.is_floating(arrow_type):
        return double(value)
    return value


def column(table, name):
    col = table.column(name)
    if pa.types.is_timestamp(col.type):
        col = col.cast(pa.int64())
    elif pa.types.is_list(col.type) and pa.types.is_timestamp(col.type.value_type):
        col = col.cast(pa.list_(pa.int64()))
    return col.type, col.to_pylist()


for path in sys.argv[1:]:
    table = pq.read_table(path)
    columns = {name: column(table, name) for name in table.column_names}
    rows = [
        {name: spell(values[i], arrow_type) for name, (arrow_type, values) in columns.items()}
        for i in range(table.num_rows)
    ]
    metadata = pq.ParquetFile(path).metadata
    names = [metadata.schema.column(i).path for i in range(metadata.num_columns)]
    groups = []
    for g in range(metadata.num_row_groups):
        group = metadata.row_group(g)
        stats = {}
        for name in (n for n in STATISTICS if n in names):
            s = group.column(names.index(name)).statistics
            raw = s.physical_type == "INT64"
            stats[name] = (
                [str(s.min_raw), str(s.max_raw)]
                if raw
                else [s.min_raw.decode("utf-8"), s.max_raw.decode("utf-8")]
            ) if s is not None and s.has_min_max else None
        groups.append({"rows": group.num_rows, "statistics": stats})
    print(json.dumps({"path": path, "rows": rows, "groups": groups}))
