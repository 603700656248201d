# The pyarrow contender of the compaction bench (bench/compaction.ts): for each hour directory
# under the input, read its files as one dataset, sort by service, metric, attribute sets (their
# entries joined as text) and time, and write one file (zstd at level 3 as ours and DuckDB:
# pyarrow's default zstd level is 1; dictionary). Arguments: input directory, output directory.
# Prints its peak RSS and CPU time as one JSON line on stderr.
import json
import os
import resource
import sys

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

source, target = sys.argv[1], sys.argv[2]
hours = sorted({root for root, _, files in os.walk(source) if any(f.endswith(".parquet") for f in files)})


def joined(column):
    maps = column.combine_chunks()
    keys = pa.ListArray.from_arrays(maps.offsets, maps.keys)
    values = pa.ListArray.from_arrays(maps.offsets, pc.fill_null(maps.items, ""))
    return pc.binary_join_element_wise(
        pc.binary_join(keys, "\x1f"), pc.binary_join(values, "\x1f"), "\x1e"
    )


for hour in hours:
    table = ds.dataset(hour, format="parquet", partitioning=None).to_table()
    keyed = table.append_column("_r", joined(table["ResourceAttributes"])).append_column(
        "_a", joined(table["Attributes"])
    )
    order = pc.sort_indices(
        keyed,
        sort_keys=[
            ("ServiceName", "ascending"),
            ("MetricName", "ascending"),
            ("_r", "ascending"),
            ("_a", "ascending"),
            ("TimeUnix", "ascending"),
        ],
    )
    out = os.path.join(target, os.path.relpath(hour, source))
    os.makedirs(out, exist_ok=True)
    pq.write_table(
        table.take(order),
        os.path.join(out, "out.parquet"),
        compression="zstd",
        compression_level=3,
        use_dictionary=True,
    )

usage = resource.getrusage(resource.RUSAGE_SELF)
# The peak resident set of this process: the kernel's VmHWM. Not ru_maxrss, which Linux carries
# across fork and exec from the parent (the bench's Node.js process, hundreds of MB).
peak = usage.ru_maxrss * 1024
try:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                peak = int(line.split()[1]) * 1024
except OSError:
    pass  # not Linux
print(
    "PEAK_RSS "
    + json.dumps({"maxRssBytes": peak, "cpuMillis": (usage.ru_utime + usage.ru_stime) * 1000}),
    file=sys.stderr,
)
