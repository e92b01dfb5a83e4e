"""Reads shard files with pyarrow and DuckDB and reports what they saw, as JSON on stdout.

Usage: python check_shards.py PLAN.json

PLAN = {"files": [{"path", "format": "parquet"|"arrow", "samples": [row indices]}],
        "datasets": [{"dir", "glob"}],   # Hive-partitioned folders, read as one table
        "flatten": [{"path", "steps": [column, field, ...]}],  # pyarrow: nested values, flattened
        "queries": [{"name", "sql"}]}    # DuckDB: rows of each query (e.g. unnest of nested columns)

The TypeScript test compares the report against the rows it wrote, so this script only reads
and describes: it holds no expectations of its own.
"""
import glob
import json
import os
import sys

import duckdb
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.ipc as ipc
import pyarrow.parquet as pq


def sql_str(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def arrow_schema(schema: pa.Schema):
    return [{"name": f.name, "type": str(f.type), "nullable": f.nullable} for f in schema]


def duck_types(con, relation_sql: str):
    rows = con.execute(f"DESCRIBE SELECT * FROM {relation_sql}").fetchall()
    return [{"name": r[0], "type": r[1]} for r in rows]


def duck_samples(con, numbered_sql: str, idx):
    # numbered_sql carries the file's own row number as __rn: no reliance on scan order.
    cur = con.execute(f"SELECT * FROM {numbered_sql} WHERE __rn IN (SELECT UNNEST(?::BIGINT[])) ORDER BY __rn", [idx])
    names = [d[0] for d in cur.description]
    out = {}
    for row in cur.fetchall():
        rec = dict(zip(names, row))
        out[str(rec.pop("__rn"))] = rec
    return out


def check_file(con, spec):
    path, fmt, idx = spec["path"], spec["format"], spec.get("samples", [])
    rep = {"path": path, "format": fmt}
    if fmt == "parquet":
        table = pq.read_table(path)
        meta = pq.ParquetFile(path).metadata
        rep["parquet"] = {
            "row_groups": meta.num_row_groups,
            "codecs": sorted({meta.row_group(g).column(c).compression
                              for g in range(meta.num_row_groups) for c in range(meta.num_columns)}),
            "created_by": meta.created_by,
        }
        # Single file: no Hive partition column may be added from the folder name.
        rel = f"read_parquet({sql_str(path)}, hive_partitioning = false)"
        numbered = (f"(SELECT * EXCLUDE (file_row_number), file_row_number AS __rn "
                    f"FROM read_parquet({sql_str(path)}, hive_partitioning = false, file_row_number = true))")
    else:
        with pa.memory_map(path) as src:
            table = ipc.open_file(src).read_all()
        # DuckDB reads the Arrow table through its Arrow import (no extension needed).
        con.register("ipc_table", table)
        con.register("ipc_numbered", table.append_column("__rn", pa.array(range(table.num_rows), pa.int64())))
        rel, numbered = "ipc_table", "ipc_numbered"
    rep["pyarrow"] = {
        "num_rows": table.num_rows,
        "schema": arrow_schema(table.schema),
        "samples": {str(i): table.slice(i, 1).to_pylist()[0] for i in idx},
        "null_counts": {c: table.column(c).null_count for c in table.column_names},
    }
    rep["duckdb"] = {
        "count": con.execute(f"SELECT count(*) FROM {rel}").fetchone()[0],
        "types": duck_types(con, rel),
        "samples": duck_samples(con, numbered, idx),
    }
    return rep


def check_dataset(con, spec):
    folder = spec["dir"]
    # Only *.parquet: a folder may also hold the .arrow twins, which a parquet reader must skip
    # (Spark: option pathGlobFilter="*.parquet").
    files = sorted(glob.glob(os.path.join(folder, "**", "*.parquet"), recursive=True))
    dataset = ds.dataset(files, format="parquet", partitioning="hive", partition_base_dir=folder)
    table = dataset.to_table()
    rel = f"read_parquet({sql_str(folder + '/' + spec.get('glob', '*/*.parquet'))}, hive_partitioning = true)"
    duck_sources = con.execute(f"SELECT source, count(*) FROM {rel} GROUP BY 1 ORDER BY 1").fetchall()
    return {
        "dir": folder,
        "pyarrow": {
            "num_rows": table.num_rows,
            "schema": arrow_schema(table.schema),
            "sources": sorted(set(table.column("source").to_pylist())),
        },
        "duckdb": {"sources": [[s, n] for s, n in duck_sources]},
    }


def flatten(spec):
    """Walks a nested column with pyarrow compute: lists are flattened, structs give a field."""
    import pyarrow.compute as pc
    steps = spec["steps"]
    arr = pq.read_table(spec["path"]).column(steps[0]).combine_chunks()
    for name in steps[1:] + [None]:
        while pa.types.is_list(arr.type):
            arr = pc.list_flatten(arr)
        if name is not None:
            arr = pc.struct_field(arr, name)
    return {"path": spec["path"], "steps": steps, "values": arr.to_pylist()}


def query(con, spec):
    return {"name": spec["name"], "rows": [list(r) for r in con.execute(spec["sql"]).fetchall()]}


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        plan = json.load(f)
    con = duckdb.connect()
    report = {
        "versions": {"pyarrow": pa.__version__, "duckdb": duckdb.__version__},
        "files": [check_file(con, s) for s in plan.get("files", [])],
        "datasets": [check_dataset(con, s) for s in plan.get("datasets", [])],
        "flatten": [flatten(s) for s in plan.get("flatten", [])],
        "queries": [query(con, s) for s in plan.get("queries", [])],
    }
    json.dump(report, sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main()
