"""Loads an output through its dataset card with Hugging Face `datasets` and reports, as JSON on
stdout, what the loader saw next to what the commit manifests list (read with pyarrow).

Usage: python check_card.py OUT

The loader runs offline (HF_DATASETS_OFFLINE, HF_HUB_OFFLINE) with a fresh HF_HOME, so nothing
is fetched and no cache of an earlier load is reused. For every config of README.md:
  manifest: rows and columns of the Parquet files the manifests list for its table (the corpus also
            per decision); the columns of a table without a listed file come from the schema part
  load:     `load_dataset(OUT, name)` (the default config: `load_dataset(OUT)`): rows and columns,
            or the error it raised
  stream:   the same with streaming=True
The TypeScript test holds the expectations; this script only reads and describes.
"""
import glob
import json
import os
import re
import shutil
import sys
import tempfile

HF_HOME = tempfile.mkdtemp(prefix="rj-hf-")
os.environ.update(HF_HOME=HF_HOME, HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1", HF_HUB_DISABLE_TELEMETRY="1")

import datasets  # noqa: E402  (after the environment above)
import pyarrow.parquet as pq  # noqa: E402
import yaml  # noqa: E402

datasets.disable_progress_bars()
datasets.logging.set_verbosity_error()


def card(out):
    text = open(os.path.join(out, "README.md"), encoding="utf8").read()
    m = re.match(r"^---\n(.*?\n)---\n(.*)$", text, re.S)
    front = yaml.safe_load(m.group(1))
    # "| verdicts | 30 | 3 |" and "| corpus (default) | 30 (keep 13, drop 7, review 10) | 9 |"
    rows = {}
    for line in m.group(2).splitlines():
        c = re.match(r"^\| ([a-z_]+)(?: \(default\))? \| ([0-9,]+)", line)
        if c:
            rows[c.group(1)] = int(c.group(2).replace(",", ""))
    return front, rows


def manifest_files(out):
    files = []
    for path in sorted(glob.glob(os.path.join(out, "_commits", "*.json"))):
        files += [f for f in json.load(open(path))["files"] if f["format"] == "parquet"]
    return files


def listed(out, files, table):
    mine = [f for f in files if f["table"] == table]
    per_decision = {}
    rows = 0
    for f in mine:
        n = pq.ParquetFile(os.path.join(out, f["key"])).metadata.num_rows
        rows += n
        d = re.match(r"corpus/decision=([a-z]+)/", f["key"])
        if d:
            per_decision[d.group(1)] = per_decision.get(d.group(1), 0) + n
    first = os.path.join(out, mine[0]["key"]) if mine else os.path.join(out, "_card", f"{table}.parquet")
    columns = pq.read_schema(first).names if os.path.exists(first) else None
    return {"rows": rows, "files": len(mine), "columns": columns, "per_decision": per_decision}


def described(ds, decisions):
    rows = sum(1 for _ in ds) if isinstance(ds, datasets.IterableDataset) else ds.num_rows
    res = {"rows": rows, "columns": list(ds.features)}
    if decisions and rows:
        counts = {}
        for d in ds["decision"] if isinstance(ds, datasets.Dataset) else (r["decision"] for r in ds):
            counts[d] = counts.get(d, 0) + 1
        res["per_decision"] = counts
    return res


def load(out, name, is_default, **kw):
    try:
        dd = datasets.load_dataset(out, **kw) if is_default else datasets.load_dataset(out, name, **kw)
        return {split: described(ds, name == "corpus") for split, ds in dd.items()}
    except Exception as e:  # reported, the test decides
        return {"error": f"{type(e).__name__}: {e}"}


def main(out):
    front, card_rows = card(out)
    files = manifest_files(out)
    report = {"configs": [], "card_rows": card_rows}
    for cfg in front["configs"]:
        name, is_default = cfg["config_name"], cfg.get("default", False)
        entry = {"name": name, "default": is_default, "data_files": cfg["data_files"], "manifest": listed(out, files, name)}
        entry["load"] = load(out, name, is_default)
        entry["stream"] = load(out, name, is_default, streaming=True)
        if name == "corpus" and entry["manifest"]["per_decision"].get("keep"):
            entry["keep_filtered"] = load(out, name, is_default, filters=[("decision", "==", "keep")])
        report["configs"].append(entry)
    json.dump(report, sys.stdout)


try:
    main(sys.argv[1])
finally:
    shutil.rmtree(HF_HOME, ignore_errors=True)
