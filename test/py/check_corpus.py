"""Reads a run's curated corpus back with pyarrow and DuckDB and compares it with the input.

argv: OUT INPUT FORMAT   (FORMAT: parquet | jsonl, the corpus format; INPUT: .jsonl or .parquet)
Prints one JSON report on stdout.
"""
import glob, json, os, sys

import duckdb
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

out, inp, fmt = sys.argv[1], sys.argv[2], sys.argv[3]
rep = {}

def input_rows():
    if inp.endswith('.parquet'):
        return {str(r['id']): r for r in pq.read_table(inp).to_pylist()}
    with open(inp) as f:
        return {str(o['id']): o for o in (json.loads(l) for l in f if l.strip())}

expected = input_rows()
con = duckdb.connect()
rep['decisions'] = dict(con.sql(f"select decision, count(*) from read_parquet('{out}/decisions/*/*.parquet') group by 1").fetchall())
rep['dead_letters_glob'] = con.sql(f"select count(*) from read_parquet('{out}/dead_letters/*/*.parquet')").fetchall()[0][0]

if fmt == 'parquet':
    files = sorted(glob.glob(f'{out}/corpus/*/*/*.parquet'))
    rep['corpus_files'] = len(files)
    rep['schemas_equal'] = len({pq.read_schema(f).remove_metadata().to_string() for f in files}) == 1
    rep['duckdb'] = dict(con.sql(f"select decision, count(*) from read_parquet('{out}/corpus/*/*/*.parquet', hive_partitioning=true) group by 1").fetchall())
    rep['duckdb_keep_ids'] = con.sql(f"select count(distinct record_id) from read_parquet('{out}/corpus/decision=keep/*/*.parquet')").fetchall()[0][0]
    table = ds.dataset(f'{out}/corpus', partitioning='hive').to_table()
    rep['pyarrow'] = {}
    for d in table.column('decision').to_pylist():
        rep['pyarrow'][d] = rep['pyarrow'].get(d, 0) + 1
    rep['record_type'] = str(table.schema.field('record').type)
    rows = table.to_pylist()
    got = {r['record_id']: (json.loads(r['record']) if isinstance(r['record'], str) else r['record']) for r in rows}
    summary_ok = all(r['n_neutral'] + r['n_minor'] + r['n_major'] + r['n_fatal'] >= 0 and 0 <= r['flagged_steps'] <= r['n_steps'] for r in rows)
    rep['summary_ok'] = summary_ok
else:
    files = sorted(glob.glob(f'{out}/jsonl/corpus/*/*/*.jsonl'))
    rep['corpus_files'] = len(files)
    rep['duckdb'] = dict(con.sql(f"select decision, count(*) from read_json_auto('{out}/jsonl/corpus/*/*/*.jsonl', format='newline_delimited') group by 1").fetchall())
    got = {}
    rep['pyarrow'] = {}
    for f in files:
        with open(f) as fh:
            for line in fh:
                o = json.loads(line)
                got[o['record_id']] = o['record']
                rep['pyarrow'][o['decision']] = rep['pyarrow'].get(o['decision'], 0) + 1

rep['records'] = len(got)
rep['missing'] = sorted(set(expected) - set(got))[:5]
rep['different'] = [k for k in expected if k in got and got[k] != expected[k]][:5]
if rep['different']:
    k = rep['different'][0]
    rep['example'] = {'input': repr(expected[k])[:600], 'corpus': repr(got[k])[:600]}
print(json.dumps(rep, default=str))
