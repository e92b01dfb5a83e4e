"""Reads a report's fingerprint tables with DuckDB, and recomputes the same numbers with SQL
straight from the run's shard tables. Prints both as JSON; the TypeScript test compares them
with each other and with the numbers in the HTML page.

Usage: python check_report.py SHARDS_DIR[,SHARDS_DIR...] REPORT_DIR
(record ids must not repeat across the shard folders given)
"""
import json
import os
import sys

import duckdb

shards, report = sys.argv[1].split(","), sys.argv[2]
con = duckdb.connect()


def rows(sql):
    cur = con.execute(sql)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


fp = {}
for name in ["fp_models", "fp_category_steps", "fp_leaves", "fp_correctness"]:
    path = os.path.join(report, "fingerprints", name + ".parquet").replace("'", "''")
    fp[name] = rows(f"select * from read_parquet('{path}')")

glob = lambda t: "[" + ", ".join("'" + os.path.join(s, t, "*", "*.parquet").replace("'", "''") + "'" for s in shards) + "]"
con.execute(f"""
create view v as
  select record_id, n_steps, error,
         coalesce(json_extract_string(meta, '$.generator'), '(unknown)') as g,
         json_extract_string(meta, '$.final_answer_correct') as correct
  from read_parquet({glob("verdicts")}, hive_partitioning = true)""")
con.execute(f"""
create view d as
  select record_id, defect_id, statement_refs, impact,
         coalesce(category_id, 'unassigned') as cat, coalesce(leaf_id, 'unassigned') as leaf,
         case impact when 'neutral' then 0 when 'minor' then 1 when 'major' then 2 else 3 end as r
  from read_parquet({glob("defects")}, hive_partitioning = true)""")
# One row per (defect, distinct cited step), for judged traces only.
con.execute("""
create view ds as
  select v.g, d.record_id, d.cat, d.leaf, d.r, unnest(list_distinct(d.statement_refs)) as step
  from d join v using (record_id) where v.error is null""")

sev = "case r when 0 then 'neutral' when 1 then 'minor' when 2 then 'major' else 'fatal' end"
sql = {
    "models": rows(f"""
      with t as (select g, count(*) traces, sum(n_steps) steps from v where error is null group by g),
           dd as (select v.g, count(*) defects, count(*) filter (where d.impact = 'fatal') fatal,
                         count(*) filter (where d.leaf = 'unassigned') unassigned
                  from d join v using (record_id) where v.error is null group by v.g),
           st as (select g, record_id, step, max(r) r from ds group by all),
           fl as (select g, count(*) flagged,
                         count(*) filter (where r = 3) f, count(*) filter (where r = 2) ma,
                         count(*) filter (where r = 1) mi, count(*) filter (where r = 0) ne
                  from st group by g)
      select t.g as generator, t.traces, t.steps, coalesce(dd.defects, 0) defects, coalesce(dd.fatal, 0) fatal_defects,
             coalesce(dd.unassigned, 0) unassigned_defects, coalesce(fl.flagged, 0) flagged_steps,
             coalesce(fl.f, 0) flagged_fatal, coalesce(fl.ma, 0) flagged_major, coalesce(fl.mi, 0) flagged_minor, coalesce(fl.ne, 0) flagged_neutral
      from t left join dd using (g) left join fl using (g) order by generator"""),
    "category_steps": rows(f"""
      with st as (select g, cat, record_id, step, max(r) r from ds group by all)
      select g as generator, cat as category_id, {sev} as severity, count(*) as flagged_steps
      from st group by all order by all"""),
    "leaves": rows("""
      with dd as (select v.g, d.leaf, d.impact from d join v using (record_id) where v.error is null),
           tot as (select g, count(*) n from dd group by g)
      select dd.g as generator, dd.leaf as leaf_id, count(*) as defects, 100.0 * count(*) / any_value(tot.n) as pct_of_defects,
             count(*) filter (where impact = 'fatal') as fatal_defects
      from dd join tot using (g) group by all order by all"""),
    "leaf_steps": rows(f"""
      with st as (select g, leaf, record_id, step, max(r) r from ds group by all)
      select g as generator, leaf as leaf_id, {sev} as severity, count(*) as flagged_steps from st group by all order by all"""),
    "correctness": rows("""
      with t as (select g, correct, count(*) traces from v where error is null group by all),
           dd as (select v.g, v.correct, count(*) defects, count(*) filter (where d.impact = 'fatal') fatal
                  from d join v using (record_id) where v.error is null group by all)
      select t.g as generator, t.correct as final_answer_correct, t.traces, coalesce(dd.defects, 0) defects,
             coalesce(dd.fatal, 0) fatal_defects, coalesce(dd.defects, 0) / t.traces as defects_per_trace,
             coalesce(dd.fatal, 0) / t.traces as fatal_per_trace
      from t left join dd on t.g = dd.g and t.correct is not distinct from dd.correct order by all"""),
}
print(json.dumps({"fp": fp, "sql": sql}, default=str))
