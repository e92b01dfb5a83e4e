"""Reads a curated corpus through exactly the files `reasoning-jury shards list OUT --table corpus
--format parquet` printed (argv[1], one path per line) with pyarrow, DuckDB and polars, and the
decisions table through its own listing (argv[2]) with DuckDB. Prints one JSON report: rows per
decision for each reader, distinct record ids, and rows whose `record` (a Struct for Parquet
input, JSON text for JSON input) does not carry the row's own id."""
import json
import sys

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.dataset as ds

corpus = [l for l in open(sys.argv[1]).read().splitlines() if l]
decisions = [l for l in open(sys.argv[2]).read().splitlines() if l]
rep = {"files": len(corpus)}


def counts(values):
    out = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return out


con = duckdb.connect()
rep["decisions"] = dict(con.execute("SELECT decision, count(*) FROM read_parquet(?) GROUP BY 1", [decisions]).fetchall())

# pyarrow: a dataset over the listed files only, decision=/source= Hive keys kept.
t = ds.dataset(corpus, format="parquet", partitioning="hive").to_table()
rtype = t.schema.field("record").type
rep["record_type"] = "struct" if pa.types.is_struct(rtype) else str(rtype)
ids = t.column("record_id").to_pylist()
recs = t.column("record").to_pylist()
rec_ids = [r["id"] if isinstance(r, dict) else json.loads(r)["id"] for r in recs]
rep["pyarrow"] = {"per_decision": counts(t.column("decision").to_pylist()), "distinct_ids": len(set(ids)),
                  "id_mismatch": sum(1 for a, b in zip(ids, rec_ids) if str(a) != str(b))}

struct = rep["record_type"] == "struct"
rec_id_sql = "record.id" if struct else "record->>'$.id'"
rows = con.execute(f"SELECT decision, record_id, CAST({rec_id_sql} AS VARCHAR) FROM read_parquet(?, hive_partitioning = true)", [corpus]).fetchall()
rep["duckdb"] = {"per_decision": counts(r[0] for r in rows), "distinct_ids": len({r[1] for r in rows}),
                 "id_mismatch": sum(1 for r in rows if r[1] != r[2])}

df = pl.read_parquet(corpus, hive_partitioning=True)
rec_id = pl.col("record").struct.field("id") if struct else pl.col("record").str.json_path_match("$.id")
df = df.with_columns(rec_id.cast(pl.Utf8).alias("rec_id"))
rep["polars"] = {"per_decision": counts(df["decision"].to_list()), "distinct_ids": df["record_id"].n_unique(),
                 "id_mismatch": df.filter(pl.col("record_id") != pl.col("rec_id")).height}
print(json.dumps(rep))
