"""Describes a run's output folder as read by pyarrow and by DuckDB, as JSON on stdout.

Usage: python check_run.py OUT_DIR

Only reads and reports (counts, column types, aggregates, samples); the TypeScript test holds
the expectations.
"""
import json
import os
import sys

import duckdb
import pyarrow.dataset as ds

out = sys.argv[1]
TABLES = ["verdicts", "defects", "steps", "decisions", "dead_letters"]
report = {"pyarrow": {}, "duckdb": {}}
con = duckdb.connect()

for t in TABLES:
    path = os.path.join(out, t)
    if not os.path.isdir(path):
        continue
    d = ds.dataset(path, format="parquet", partitioning="hive")
    table = d.to_table()
    report["pyarrow"][t] = {
        "rows": table.num_rows,
        "types": {f.name: str(f.type) for f in table.schema},
        "nullable": {f.name: f.nullable for f in table.schema},
    }
    glob = os.path.join(path, "*", "*.parquet").replace("'", "''")
    rel = f"read_parquet('{glob}', hive_partitioning = true)"
    report["duckdb"][t] = {
        "rows": con.execute(f"select count(*) from {rel}").fetchone()[0],
        "types": {r[0]: r[1] for r in con.execute(f"describe select * from {rel}").fetchall()},
    }

v = "read_parquet('" + os.path.join(out, "verdicts", "*", "*.parquet") + "', hive_partitioning = true)"
d = "read_parquet('" + os.path.join(out, "defects", "*", "*.parquet") + "', hive_partitioning = true)"
s = "read_parquet('" + os.path.join(out, "steps", "*", "*.parquet") + "', hive_partitioning = true)"
c = "read_parquet('" + os.path.join(out, "decisions", "*", "*.parquet") + "', hive_partitioning = true)"
report["aggregates"] = {
    "distinct_verdict_ids": con.execute(f"select count(distinct record_id) from {v}").fetchone()[0],
    "sum_n_steps": con.execute(f"select sum(n_steps) from {v}").fetchone()[0],
    "sum_n_defects": con.execute(f"select sum(n_defects) from {v}").fetchone()[0],
    "sum_tokens_in": con.execute(f"select sum(tokens_in) from {v}").fetchone()[0],
    "labelled_steps": con.execute(f"select count(*) from {s} where label").fetchone()[0],
    # unjudged steps (their record has no verdict) must be null, never false
    "null_labels": con.execute(f"select count(*) from {s} where label is null").fetchone()[0],
    "unjudged_steps": con.execute(f"select count(*) from {s} st join {v} vd using (record_id) where vd.error is not null").fetchone()[0],
    "unjudged_null_steps": con.execute(
        f"select count(*) from {s} st join {v} vd using (record_id) where vd.error is not null and st.label is null and st.max_impact is null"
    ).fetchone()[0],
    "steps_citing_defects": con.execute(f"select count(*) from {s} where len(defect_ids) > 0").fetchone()[0],
    "max_ref": con.execute(f"select max(r) from (select unnest(statement_refs) as r from {d})").fetchone()[0],
    "refs_beyond_steps": con.execute(
        f"select count(*) from (select unnest(d.statement_refs) as r, v.n_steps from {d} d join {v} v using (record_id)) where r > n_steps"
    ).fetchone()[0],
    "decisions": dict(con.execute(f"select decision, count(*) from {c} group by 1").fetchall()),
    "fatal_dropped": con.execute(f"select count(*) from {c} where decision = 'drop' and reason like 'fatal_defect%'").fetchone()[0],
    "verdicts_with_fatal": con.execute(f"select count(*) from {v} where max_impact = 'fatal'").fetchone()[0],
    "sample": con.execute(f"select record_id, n_steps, source, source_offset, json_extract_string(meta, '$.generator') from {v} order by source_offset limit 1").fetchone(),
}
print(json.dumps(report, default=str))
