/**
 * `npm run bench -- delta`: what the Delta log costs (docs/benchmarks.md, "Delta tables").
 *   1. commit time per range, with and without the log (ShardCommitter on a local folder,
 *      synthetic tables of a 250-record range, encoding included);
 *   2. whole `run` wall time on 5,000 records with instant simulated jurors, with and without
 *      `--table-format delta` (the bundled bin; rounds interleaved);
 *   3. opening a table of 10,000 ranges, with and without checkpoints: our reader
 *      (DeltaLog.current) and delta-rs (`DeltaTable(path)` and its file list, via
 *      scripts/pyenv.sh's python).
 * Env: DELTA_ROUNDS (default 3), DELTA_RANGES (default 10000), DELTA_PARTS (comma list of
 * commit, run, open; default all three).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { LocalObjectStore } from '../src/pipeline/storage/object-store.js';
import { ShardCommitter } from '../src/pipeline/commit/shard-commit.js';
import { RangeTableLog } from '../src/pipeline/commit/delta/range-table-log.js';
import { DeltaLog } from '../src/pipeline/commit/delta/delta-log.js';
import { checkpointKey, commitKey, encodeCommit, lastCheckpointKey, type DeltaAction } from '../src/pipeline/commit/delta/delta-actions.js';
import { encodeCheckpoint } from '../src/pipeline/commit/delta/delta-checkpoint.js';
import { syntheticRecords } from '../src/sim/synthetic.js';
import { allTables } from '../test/shards/synth.js';
import { fmt, median } from './common.js';

const CLI = fileURLToPath(new URL('../cli/main.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const pos = (i: number) => `f0+${String(i).padStart(6, '0')}`;

async function commitMs(delta: boolean, ranges: number): Promise<number[]> {
  const dir = mkdtempSync(join(tmpdir(), 'rj-bench-delta-'));
  const store = new LocalObjectStore(dir);
  const tableLog = delta ? new RangeTableLog(store, { checkpointInterval: 100, engineInfo: 'bench' }) : undefined;
  const c = new ShardCommitter(store, { corpus: 'off', ...(tableLog ? { tableLog } : {}) });
  const tables = allTables(1, 'file');
  const ms: number[] = [];
  for (let i = 0; i < ranges; i++) {
    const t0 = performance.now();
    await c.commit({ source: 'file', first: pos(i * 250), last: pos(i * 250 + 249), tables });
    ms.push(performance.now() - t0);
  }
  rmSync(dir, { recursive: true, force: true });
  return ms;
}

function config(dir: string): string {
  const profile = join(dir, 'profile.yaml');
  writeFileSync(profile, YAML.stringify({ seed: 9, models: { default: { latency_ms: 0, recall: 0.6, false_positive_rate: 0.05 } } }));
  const path = join(dir, 'jury.yaml');
  writeFileSync(path, YAML.stringify({ endpoints: { sim: { kind: 'simulator', profile, max_concurrency: 64 } }, mode: 'single', jurors: [{ id: 'j', endpoint: 'sim', model: 'sim-juror-a' }], cache: { enabled: false, dir: join(dir, 'cache') } }));
  return path;
}

function runSeconds(dir: string, input: string, cfg: string, delta: boolean, round: number): number {
  const out = join(dir, `out-${delta ? 'delta' : 'plain'}-${round}`);
  const t0 = performance.now();
  execFileSync(process.execPath, [CLI, 'run', '-c', cfg, '-i', input, '-o', out, '--range-records', '250', '--concurrency', '32', '--progress', 'none', ...(delta ? ['--table-format', 'delta'] : [])], { stdio: 'ignore' });
  return (performance.now() - t0) / 1000;
}

/** A table of `n` range commits written straight to the log (no data files: opening reads only the log). */
/** Encoding time and size of the newest checkpoint syntheticTable wrote (what a writer pays every 100 commits at that size). */
let checkpointWrite: { ms: number; bytes: number } | undefined;

function syntheticTable(dir: string, n: number, checkpoints: boolean): string {
  const store = new LocalObjectStore(dir);
  const root = 'verdicts/';
  mkdirSync(join(dir, 'verdicts', '_delta_log'), { recursive: true });
  const live: DeltaAction[] = [];
  const lastCheckpoint = Math.floor((n - 1) / 100) * 100;
  const schema = JSON.stringify({ type: 'struct', fields: [{ name: 'record_id', type: 'string', nullable: false, metadata: {} }, { name: 'source', type: 'string', nullable: false, metadata: {} }] });
  const head: DeltaAction[] = [{ protocol: { minReaderVersion: 1, minWriterVersion: 2 } }, { metaData: { id: '00000000-0000-4000-8000-000000000000', format: { provider: 'parquet', options: {} }, schemaString: schema, partitionColumns: ['source'], configuration: {}, createdTime: 0 } }];
  for (let v = 0; v < n; v++) {
    const add: DeltaAction = { add: { path: `source=file/part-${pos(v * 250)}-${pos(v * 250 + 249)}.parquet`, partitionValues: { source: 'file' }, size: 50_000, modificationTime: v, dataChange: true, stats: '{"numRecords":250}' } };
    const txn: DeltaAction = { txn: { appId: `rj-add:${v}`, version: 1, lastUpdated: v } };
    const actions = [...(v === 0 ? head : []), add, txn];
    writeFileSync(store.locate(commitKey(root, v)), encodeCommit([{ commitInfo: { timestamp: v, operation: 'STREAMING UPDATE', operationParameters: {}, engineInfo: 'bench', isBlindAppend: true } }, ...actions]));
    live.push(add, txn);
    // Only the newest checkpoint is ever read (through _last_checkpoint), so the earlier ones a
    // writer leaves behind are not written here: at 100,000 ranges they would be 1,000 files.
    if (checkpoints && v > 0 && v === lastCheckpoint) {
      const t0 = performance.now();
      const bytes = encodeCheckpoint([...head, ...live]);
      checkpointWrite = { ms: performance.now() - t0, bytes: bytes.byteLength };
      writeFileSync(store.locate(checkpointKey(root, v)), bytes);
      writeFileSync(store.locate(lastCheckpointKey(root)), JSON.stringify({ version: v, size: head.length + live.length }));
    }
  }
  return join(dir, 'verdicts');
}

function pythonOpenMs(python: string, table: string): number {
  const code = 'import sys,time\nfrom deltalake import DeltaTable\nt=time.perf_counter(); dt=DeltaTable(sys.argv[1]); n=len(dt.file_uris()); print((time.perf_counter()-t)*1000, n, flush=True)\nimport os; os._exit(0)';
  const [ms, files] = execFileSync(python, ['-c', code, table], { encoding: 'utf8' }).trim().split(' ').map(Number);
  if (files === undefined || !Number.isFinite(files)) throw new Error('delta-rs returned no file count');
  return ms!;
}

export async function benchDelta(): Promise<string> {
  const rounds = Number(process.env.DELTA_ROUNDS ?? 3);
  const nRanges = Number(process.env.DELTA_RANGES ?? 10_000);
  const parts = new Set((process.env.DELTA_PARTS ?? 'commit,run,open').split(','));
  const lines: string[] = [];
  if (parts.has('commit')) lines.push(await commitPart(rounds));
  if (parts.has('run')) lines.push(runPart(rounds));
  if (parts.has('open')) lines.push(...(await openPart(rounds, nRanges)));
  return lines.map((l) => `- ${l}`).join('\n');
}

/** 1. commit time per range */
async function commitPart(rounds: number): Promise<string> {
  const plain: number[] = [];
  const delta: number[] = [];
  for (let r = 0; r < rounds; r++) {
    plain.push(median(await commitMs(false, 40)));
    delta.push(median(await commitMs(true, 40)));
  }
  return `Commit time per range (40 ranges of 7 synthetic tables, 250 records, local folder), median per round: without the log ${plain.map((x) => fmt(x, 1)).join(', ')} ms (median **${fmt(median(plain), 1)}**); with it ${delta.map((x) => fmt(x, 1)).join(', ')} ms (median **${fmt(median(delta), 1)}**).`;
}

/** 2. whole run, with and without the log */
function runPart(rounds: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'rj-bench-delta-run-'));
  const input = join(dir, 'in.jsonl');
  writeFileSync(input, syntheticRecords(5000, { seed: 38 }).map((r) => JSON.stringify(r)).join('\n') + '\n');
  const cfg = config(dir);
  const wallPlain: number[] = [];
  const wallDelta: number[] = [];
  for (let r = 0; r < rounds; r++) {
    wallPlain.push(runSeconds(dir, input, cfg, false, r));
    wallDelta.push(runSeconds(dir, input, cfg, true, r));
  }
  const line = `Whole \`run\`, 5,000 synthetic records, one instant simulated juror, 20 ranges: without the log ${wallPlain.map((x) => fmt(x, 1)).join(', ')} s (median **${fmt(median(wallPlain), 1)}**); with \`--table-format delta\` ${wallDelta.map((x) => fmt(x, 1)).join(', ')} s (median **${fmt(median(wallDelta), 1)}**).`;
  rmSync(dir, { recursive: true, force: true });
  return line;
}

/** 3. open time at nRanges, with and without checkpoints */
async function openPart(rounds: number, nRanges: number): Promise<string[]> {
  const lines: string[] = [];
  const python = execFileSync('bash', [join(ROOT, 'scripts/pyenv.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim().split('\n').pop()!;
  for (const checkpoints of [false, true]) {
    const tdir = mkdtempSync(join(tmpdir(), 'rj-bench-delta-open-'));
    const table = syntheticTable(tdir, nRanges, checkpoints);
    const ours: number[] = [];
    const rs: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const t0 = performance.now();
      const state = await new DeltaLog(new LocalObjectStore(tdir), 'verdicts/', { checkpointInterval: 0, engineInfo: 'bench' }).current();
      ours.push(performance.now() - t0);
      if (state.files.size !== nRanges) throw new Error(`read ${state.files.size} files, wrote ${nRanges}`);
      rs.push(pythonOpenMs(python, table));
    }
    lines.push(`Opening a table of ${nRanges.toLocaleString('en-US')} range commits ${checkpoints ? 'with a checkpoint every 100 commits' : 'without checkpoints'}${checkpoints && checkpointWrite ? ` (its newest checkpoint: ${fmt(checkpointWrite.bytes / 1e6, 1)} MB, encoded in ${fmt(checkpointWrite.ms, 0)} ms)` : ''}: delta-rs \`DeltaTable(path)\` + file list ${rs.map((x) => fmt(x, 0)).join(', ')} ms (median **${fmt(median(rs), 0)}**); our reader ${ours.map((x) => fmt(x, 0)).join(', ')} ms (median **${fmt(median(ours), 0)}**).`);
    rmSync(tdir, { recursive: true, force: true });
  }
  return lines;
}
