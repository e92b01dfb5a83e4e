"""Reports, as read by pyarrow, how the steps of records without a verdict look (JSON on stdout).

Usage: python check_unjudged.py OUT_DIR

Only reads and reports; the TypeScript test holds the expectations.
"""
import json
import os
import sys

import pyarrow.compute as pc
import pyarrow.dataset as ds

out = sys.argv[1]


def table(name):
    return ds.dataset(os.path.join(out, name), format="parquet", partitioning="hive").to_table()


steps = table("steps")
verdicts = table("verdicts")
unjudged_ids = verdicts.filter(pc.is_valid(verdicts["error"]))["record_id"]
unjudged = steps.filter(pc.is_in(steps["record_id"], value_set=unjudged_ids))
field = {f.name: f for f in steps.schema}
print(json.dumps({
    "steps": steps.num_rows,
    "verdicts": verdicts.num_rows,
    "unjudged_records": len(unjudged_ids),
    "unjudged_steps": unjudged.num_rows,
    "label": {"type": str(field["label"].type), "nullable": field["label"].nullable},
    "max_impact_nullable": field["max_impact"].nullable,
    "null_labels": steps["label"].null_count,
    "unjudged_null_labels": unjudged["label"].null_count,
    "unjudged_null_impacts": unjudged["max_impact"].null_count,
    "false_labels": pc.sum(pc.invert(pc.fill_null(steps["label"], True))).as_py() or 0,
}))
