"""Reads a run's shards straight from the S3 server with pyarrow and reports what it sees.

Usage: python check_s3.py BUCKET PREFIX     (endpoint and credentials from S3_ENDPOINT / AWS_*)

Prints JSON: per table the row count, and for verdicts and dead letters the ids / offsets, so
the TypeScript test can hold the expectations. Reads the folder as a Hive-partitioned dataset,
the way a downstream Spark/pyarrow job would, without looking at the commit manifests.
"""
import json
import os
import sys
from urllib.parse import urlparse

import pyarrow.dataset as ds
import pyarrow.fs as pafs

bucket, prefix = sys.argv[1], sys.argv[2].strip("/")
endpoint = urlparse(os.environ["S3_ENDPOINT"])
s3 = pafs.S3FileSystem(
    endpoint_override=endpoint.netloc,
    scheme=endpoint.scheme,
    access_key=os.environ["AWS_ACCESS_KEY_ID"],
    secret_key=os.environ["AWS_SECRET_ACCESS_KEY"],
    region=os.environ.get("AWS_REGION", "us-east-1"),
)

report = {}
for table in ["verdicts", "defects", "steps", "decisions", "dead_letters"]:
    base = "/".join(p for p in [bucket, prefix, table] if p)
    if s3.get_file_info(base).type == pafs.FileType.NotFound:
        report[table] = {"rows": 0}
        continue
    t = ds.dataset(base, filesystem=s3, format="parquet", partitioning="hive").to_table()
    entry = {"rows": t.num_rows, "columns": t.schema.names}
    if table == "verdicts":
        entry["record_ids"] = t.column("record_id").to_pylist()
        entry["sources"] = sorted(set(t.column("source").to_pylist()))
    if table == "dead_letters":
        entry["positions"] = [f"{u}@{o}" for u, o in zip(t.column("source_unit").to_pylist(), t.column("source_offset").to_pylist())]
    report[table] = entry
print(json.dumps(report))
