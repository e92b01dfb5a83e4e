/**
 * `npm run bench view`: the viewer over a 1,000,000-record output (issue 40). Writes a synthetic
 * output once (verdicts, decisions, defects with categories: the tables the records table reads;
 * 100 ranges of 10,000 records, under .cache/bench-view-1m/, reused when there), starts the real
 * `reasoning-jury view` on it, and measures: the index build (start to "ready"), the first page,
 * filter changes and a sort (each a new query the server has not answered before), opening a
 * record, and the server's resident memory (now and peak, from /proc).
 * RJ_BENCH_VIEW_RECORDS changes the size.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { IMPACTS } from '../schemas/defect.js';
import { FILTER_DECISIONS, SHARD_TABLE_NAMES, type DecisionRow, type DefectRow, type VerdictRow } from '../schemas/outputs.js';
import { LocalObjectStore } from '../src/pipeline/storage/object-store.js';
import { ShardCommitter } from '../src/pipeline/commit/shard-commit.js';
import { createRng, type Rng } from '../src/util/prng.js';
import { fmt } from './common.js';

const PER_RANGE = 10_000;
const CATEGORIES = ['computation', 'logic', 'misreading', 'omission', 'hallucination', 'formatting'];

function recordRows(rng: Rng, id: string, offset: number): { verdict: VerdictRow; decision: DecisionRow; defects: DefectRow[] } {
  const n = rng.chance(0.45) ? 0 : rng.int(1, 4);
  const defects: DefectRow[] = Array.from({ length: n }, (_, k) => ({
    record_id: id, defect_id: `${id}#d${k}`, statement_refs: [rng.int(1, 8)], impact: rng.pick(IMPACTS), what_went_wrong: 'w', evidence: 'e', correct_value: null,
    vote_count: rng.int(1, 3), voters: ['j-a'], category_id: rng.pick(CATEGORIES), leaf_id: null, taxonomy_status: 'assigned',
  }));
  const worst = defects.reduce((w, d) => Math.max(w, IMPACTS.indexOf(d.impact)), -1);
  const decision = worst === 3 ? 'drop' : rng.chance(0.15) ? 'review' : 'keep';
  const count = (i: string) => defects.filter((d) => d.impact === i).length;
  return {
    verdict: {
      record_id: id, mode: 'consolidation', jurors_total: 3, jurors_ok: rng.chance(0.03) ? 2 : 3, phase1_seats: null, escalations: null, n_steps: 8, n_defects: n,
      max_impact: worst < 0 ? null : IMPACTS[worst]!, confidence: 1, n_dissent: rng.int(0, 2), termination_reason: 'not_applicable', rounds: 0, degraded: rng.chance(0.02),
      degraded_reason: null, error: null, tokens_in: 6000, tokens_out: 300, cost_usd: rng.chance(0.01) ? null : rng.next() / 100, latency_ms: 100, prompt_hash: 'p', config_hash: 'c',
      source: 'file', source_unit: 'bench.jsonl', source_offset: offset, meta: null,
    },
    decision: {
      record_id: id, decision, reason: decision === 'drop' ? 'fatal_defect: a fatal defect' : decision === 'review' ? 'some_dissent: dissent' : 'no rule matched',
      n_neutral: count('neutral'), n_minor: count('minor'), n_major: count('major'), n_fatal: count('fatal'), fatal_step_rate: 0, flagged_step_rate: 0,
    },
    defects,
  };
}

async function writeOutput(out: string, records: number): Promise<void> {
  const committer = new ShardCommitter(new LocalObjectStore(out), { off: SHARD_TABLE_NAMES.filter((t) => !['verdicts', 'decisions', 'defects'].includes(t)) });
  const rng = createRng(['bench-view']);
  for (let first = 0; first < records; first += PER_RANGE) {
    const rows = Array.from({ length: Math.min(PER_RANGE, records - first) }, (_, k) => recordRows(rng, `rec-${String(first + k).padStart(7, '0')}`, first + k));
    const pos = (i: number) => `bench+${String(i).padStart(9, '0')}`;
    await committer.commit({
      source: 'file', first: pos(first), last: pos(first + rows.length - 1),
      tables: { verdicts: rows.map((r) => r.verdict), decisions: rows.map((r) => r.decision), defects: rows.flatMap((r) => r.defects) },
    });
  }
}

const rssMb = (pid: number, field: 'VmRSS' | 'VmHWM'): number => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? Number.NaN) / 1024;

async function timed(url: string): Promise<{ ms: number; body: { total?: number } }> {
  const t = performance.now();
  const res = await fetch(url);
  const body = (await res.json()) as { total?: number };
  if (!res.ok) throw new Error(`${url}: ${res.status} ${JSON.stringify(body)}`);
  return { ms: performance.now() - t, body };
}

export async function benchView(): Promise<string> {
  const records = Number(process.env.RJ_BENCH_VIEW_RECORDS ?? 1_000_000);
  const out = join(process.cwd(), '.cache', `bench-view-${records}`);
  let writeS = Number.NaN;
  if (!existsSync(join(out, '_commits'))) {
    const t = performance.now();
    await writeOutput(out, records);
    writeS = (performance.now() - t) / 1000;
  }
  const t0 = performance.now();
  const child = spawn(process.execPath, ['dist/cli/main.js', 'view', out, '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let text = '';
  child.stdout!.on('data', (d) => (text += d));
  const exited = new Promise<never>((_, reject) => child.on('exit', (code) => reject(new Error(`view exited ${code}`))));
  const until = async (test: () => boolean | Promise<boolean>) => {
    while (!(await test())) await Promise.race([new Promise((r) => setTimeout(r, 20)), exited]);
    return performance.now() - t0;
  };
  await until(() => /at http:\/\/\S+/.test(text));
  const url = /at (http:\/\/\S+)/.exec(text)![1]!;
  // The page's first request: answered from the ranges read so far while the rest are read.
  let firstTotal = 0;
  const firstPageMs = await until(async () => {
    const res = await fetch(`${url}api/records?offset=0&limit=100`);
    if (res.status === 503) return false;
    firstTotal = ((await res.json()) as { total: number }).total;
    return true;
  });
  const readyMs = await until(() => /ready/.test(text));
  try {
    const rows: [string, string, number, number | undefined][] = [];
    const step = async (what: string, query: string) => {
      const r = await timed(`${url}api/${query}`);
      rows.push([what, query, r.ms, r.body.total]);
    };
    await step('first page, every range read', 'records?offset=0&limit=100');
    await step('filter: decision', 'records?decision=review&limit=100');
    await step('filter: decision + severity', 'records?decision=drop&severity=fatal&limit=100');
    await step('filter: category + degraded', 'records?category=logic&degraded=no&limit=100');
    await step('sort: cost, descending', 'records?sort=cost&dir=desc&limit=100');
    await step('sort: id, descending (1st)', 'records?sort=id&dir=desc&limit=100');
    const mid = Math.floor(records / 2);
    await step(`page ${(mid / 100 + 1).toLocaleString('en')} of that sort`, `records?sort=id&dir=desc&offset=${mid}&limit=100`);
    await step('open a record, within a filter', `record?id=rec-${String(mid).padStart(7, '0')}&decision=keep`);
    await step('overview', 'overview');
    const rss = rssMb(child.pid!, 'VmRSS');
    const peak = rssMb(child.pid!, 'VmHWM');
    return [
      `${records.toLocaleString('en')} records in ${Math.ceil(records / PER_RANGE)} ranges (verdicts, decisions, defects)${Number.isNaN(writeS) ? ', output reused' : `, written in ${fmt(writeS, 0)} s`}`,
      '',
      '| step | request | ms | records matched |',
      '|---|---|---:|---:|',
      `| start to first page (over the ranges read so far) | \`/api/records?offset=0&limit=100\` | ${fmt(firstPageMs, 0)} | ${firstTotal.toLocaleString('en')} |`,
      `| start to every range read | \`view OUT\` | ${fmt(readyMs, 0)} | ${records.toLocaleString('en')} |`,
      ...rows.map(([w, q, ms, total]) => `| ${w} | \`/api/${q}\` | ${fmt(ms, 0)} | ${total === undefined ? '' : total.toLocaleString('en')} |`),
      '',
      `server RSS after these: ${fmt(rss, 0)} MB (peak ${fmt(peak, 0)} MB)`,
    ].join('\n');
  } finally {
    child.kill('SIGTERM');
  }
}
