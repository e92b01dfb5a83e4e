"""Reads exactly the files `reasoning-jury shards list` printed (one path per line in argv[1])
with pyarrow, DuckDB and polars, and prints what each saw as JSON: row count and record ids."""
import json
import sys

import duckdb
import polars as pl
import pyarrow.dataset as ds

files = [l for l in open(sys.argv[1]).read().splitlines() if l]
out = {}

# pyarrow: a dataset over the listed files only, with the source=<name> Hive key kept.
t = ds.dataset(files, format="parquet", partitioning="hive").to_table()
out["pyarrow"] = {"rows": t.num_rows, "ids": sorted(t.column("record_id").to_pylist())}

con = duckdb.connect()
rows = con.execute("SELECT record_id FROM read_parquet(?, hive_partitioning = true)", [files]).fetchall()
out["duckdb"] = {"rows": len(rows), "ids": sorted(r[0] for r in rows)}

df = pl.read_parquet(files, hive_partitioning=True)
out["polars"] = {"rows": df.height, "ids": sorted(df["record_id"].to_list())}

print(json.dumps(out))
