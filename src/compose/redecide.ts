/**
 * `reasoning-jury decide`: a new filter policy over committed verdicts, with no model call.
 *
 * Each committed range of the judged output (its manifest lists the files) is read back and
 * decided again with the same function the stream uses (src/derive/rows.ts `decideRows`), then
 * committed to the new output under the same range names and protocol (parts, then manifest).
 * A range whose manifest is already in the new output is skipped, so an interrupted `decide` is
 * resumed by running it again, and every record is decided exactly once.
 */
import { createHash } from 'node:crypto';
import type { FilterPolicy } from '../../schemas/config.js';
import { FILTER_DECISIONS, type CommitManifest, type DecisionRow, type DefectRow, type FilterDecision, type ShardFormat, type ShardTableName, type StepRow, type VerdictRow } from '../../schemas/outputs.js';
import { decideRows } from '../derive/rows.js';
import type { ObjectStore } from '../pipeline/object-store.js';
import { listCommitted, ShardCommitter } from '../pipeline/shard-commit.js';
import { readArrowIpcRows, readParquetRows, type PlainRow } from '../pipeline/shard-read.js';

export interface RedecideOptions {
  from: ObjectStore;
  /** the judged output, for messages and the new manifests */
  fromLocation: string;
  to: ObjectStore;
  toLocation: string;
  policy: FilterPolicy;
  formats: readonly ShardFormat[];
  onRange?(e: { first: string; last: string; records: number; existing: boolean }): void;
}

export interface RedecideResult {
  ranges: number;
  /** ranges found already decided in the new output (a resumed `decide`) */
  existing: number;
  records: number;
  decisions: Record<FilterDecision, number>;
}

/** A problem with the inputs of `decide` the user fixes (exit 2, one line). */
export class RedecideError extends Error {}

/** Identifies a policy in the new manifests, so a resume with another policy is refused. */
export function policyHash(policy: FilterPolicy): string {
  return createHash('sha256').update(JSON.stringify(policy)).digest('hex').slice(0, 16);
}

const usesDissent = (p: FilterPolicy): boolean =>
  p.rules.some((r) => [r, ...(r.all ?? [])].some((c) => c.has_dissent !== undefined || c.dissent_at_least !== undefined));

async function readTable(store: ObjectStore, m: CommitManifest, table: ShardTableName): Promise<PlainRow[]> {
  const files = m.files.filter((f) => f.table === table);
  const format: ShardFormat | undefined = files.some((f) => f.format === 'parquet') ? 'parquet' : files.some((f) => f.format === 'arrow') ? 'arrow' : undefined;
  const out: PlainRow[] = [];
  for (const f of files.filter((x) => x.format === format)) {
    const bytes = await store.get(f.key);
    if (!bytes) throw new RedecideError(`committed file missing: ${f.key} (listed in _commits/${m.first}-${m.last}.json)`);
    out.push(...(format === 'parquet' ? await readParquetRows(bytes) : readArrowIpcRows(bytes)));
  }
  return out;
}

const ordinal = (defectId: string): number => Number(/#d(\d+)$/.exec(defectId)?.[1] ?? 0);

function groupBy<T extends { record_id: string }>(rows: readonly T[]): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const r of rows) {
    let list = m.get(r.record_id);
    if (!list) m.set(r.record_id, (list = []));
    list.push(r);
  }
  return m;
}

/** The decision rows of one committed range, in the order of its verdict rows (as a run writes them). */
export async function decideRange(store: ObjectStore, m: CommitManifest, policy: FilterPolicy): Promise<DecisionRow[]> {
  const verdicts = (await readTable(store, m, 'verdicts')) as unknown as VerdictRow[];
  const defects = groupBy((await readTable(store, m, 'defects')) as unknown as DefectRow[]);
  const steps = groupBy((await readTable(store, m, 'steps')) as unknown as StepRow[]);
  const dissent = usesDissent(policy);
  return verdicts.map((v) => {
    if (v.n_dissent === undefined || v.n_dissent === null) {
      if (dissent) throw new RedecideError(`the policy tests dissent, but the verdicts of range ${m.first}-${m.last} have no n_dissent column (judged before it existed): re-judge, or drop the dissent conditions`);
      v = { ...v, n_dissent: 0 };
    }
    const d = [...(defects.get(v.record_id) ?? [])].sort((a, b) => ordinal(a.defect_id) - ordinal(b.defect_id));
    const s = [...(steps.get(v.record_id) ?? [])].sort((a, b) => a.step_index - b.step_index);
    return decideRows({ verdict: v, defects: d, steps: s }, policy);
  });
}

/** Decides every committed range of `from` into `to`; see the module comment. */
export async function redecide(o: RedecideOptions): Promise<RedecideResult> {
  const committer = new ShardCommitter(o.to, { formats: o.formats });
  const hash = policyHash(o.policy);
  const result: RedecideResult = { ranges: 0, existing: 0, records: 0, decisions: Object.fromEntries(FILTER_DECISIONS.map((d) => [d, 0])) as Record<FilterDecision, number> };
  const manifests = await listCommitted(o.from);
  if (manifests.length === 0) throw new RedecideError(`${o.fromLocation} holds no committed ranges (no _commits/*.json): nothing to decide`);
  for (const m of manifests) {
    const done = await committer.committed(m.first, m.last);
    if (done) {
      const theirs = (done.extra as { policy_hash?: unknown } | undefined)?.policy_hash;
      if (theirs !== hash) throw new RedecideError(`${o.toLocation} already holds range ${m.first}-${m.last} decided with another policy (policy_hash ${String(theirs)}, this one ${hash}): use another --out`);
    }
    const rows = done ? null : await decideRange(o.from, m, o.policy);
    const res = rows
      ? await committer.commit({
          source: m.source,
          first: m.first,
          last: m.last,
          // TODO(issue 13, curated corpus): a fresh run also writes the corpus table, whose rows
          // are the input records plus their decision. The shards do not hold the input, so
          // `decide` cannot write it yet: it needs an `--input` (the run's input, checked against
          // the manifest's range) to re-read each range's records and join them here.
          tables: { decisions: rows },
          ...(m.range ? { range: m.range } : {}),
          ...(m.settings ? { settings: { ...m.settings, formats: [...o.formats] } } : {}),
          extra: { decided_from: o.fromLocation, from_checksum: m.checksum, policy_hash: hash },
        })
      : null;
    const records = res ? rows!.length : (done!.rows.decisions ?? 0);
    if (rows) for (const r of rows) result.decisions[r.decision] += 1;
    result.ranges += 1;
    result.records += records;
    if (!res || res.alreadyCommitted) result.existing += 1;
    o.onRange?.({ first: m.first, last: m.last, records, existing: !res || res.alreadyCommitted });
  }
  return result;
}
