/**
 * What the `run --batch` end-to-end tests share: `reasoning-jury simulate` as its own process
 * (graded against the input's labels, with a `batch:` profile section), a jury config on it,
 * and committed rows compared call metadata aside.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { LocalObjectStore } from '../../src/pipeline/storage/object-store.js';
import { BIN } from './cli.js';

export const TABLES = ['verdicts', 'defects', 'steps', 'decisions'] as const;
export type Table = (typeof TABLES)[number];
/** `latency_ms` is measured wall time; a batched call's `cost_usd` is at the batch rate. */
export const NOT_COMPARED = ['latency_ms', 'cost_usd'];
export const PRICE = { input_per_mtok: 0.15, output_per_mtok: 0.6 };
export const MODELS = ['sim-juror-a', 'sim-juror-b', 'sim-juror-c', 'sim-consolidator'];

export interface Sim {
  url: string;
  port: number;
  stats(): Promise<{ online: { chat_calls: number }; accepted: Array<{ id: string; status: string; custom_ids: string[]; expired: string[]; failed: string[] }>; batch_requests: number }>;
}

/** The profile the simulator (and scripts/sim-run-batch.mjs --profile) answers with. */
export function simProfileFile(dir: string, name: string, batch: Record<string, unknown> = {}): string {
  const profile = join(dir, `${name}-profile.yaml`);
  writeFileSync(profile, YAML.stringify({ seed: 9, models: { default: { latency_ms: 0, recall: 0.6, false_positive_rate: 0.05 } }, batch }));
  return profile;
}

/** `reasoning-jury simulate` graded against `gold` (on `port`, 0: any); the child is pushed to `children` for the caller to kill. */
export async function startSim(dir: string, children: ChildProcess[], name: string, gold: string, batch: Record<string, unknown>, port = 0): Promise<Sim> {
  const profile = simProfileFile(dir, name, batch);
  const child = spawn(process.execPath, [BIN, 'simulate', '--port', String(port), '--profile', profile, '--gold', gold], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const bound = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on http:\/\/[^:]+:(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.on('exit', (code) => reject(new Error(`simulator exited with ${code}`)));
  });
  const url = `http://127.0.0.1:${bound}`;
  return { url: `${url}/v1`, port: bound, stats: async () => ((await (await fetch(`${url}/sim/stats`)).json()) as { batch: Awaited<ReturnType<Sim['stats']>> }).batch };
}

/** Three jurors and a consolidator on one endpoint at `url`, cache off; `batch` is the endpoint's batch section. */
export function batchConfig(dir: string, name: string, url: string, extra: Record<string, unknown> = {}, batch: Record<string, unknown> = {}): string {
  const path = join(dir, `${name}.yaml`);
  writeFileSync(
    path,
    YAML.stringify({
      endpoints: { sim: { kind: 'openai', base_url: url, max_concurrency: 64, batch: { quiet_ms: 300, poll_interval_ms: 100, ...batch } } },
      jurors: MODELS.slice(0, 3).map((model, i) => ({ id: `jury-${i}`, endpoint: 'sim', model })),
      consolidator: { id: 'consolidator', endpoint: 'sim', model: 'sim-consolidator' },
      cache: { enabled: false, dir: join(dir, 'cache') },
      prices: Object.fromEntries(MODELS.map((m) => [m, PRICE])),
      ...extra,
    }),
  );
  return path;
}

function comparable(row: Record<string, unknown>): string {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) if (!NOT_COMPARED.includes(k)) out[k] = typeof v === 'bigint' ? Number(v) : v;
  return JSON.stringify(out);
}

export async function rows(out: string, table: Table): Promise<Array<Record<string, unknown>>> {
  return readCommittedRows(new LocalObjectStore(out), table);
}

/** Rows of a table as sorted comparable strings (a record's defects and steps in their own order). */
export async function tableOf(out: string, table: Table): Promise<string[]> {
  return (await rows(out, table)).map(comparable).sort();
}

export interface JournalFile {
  batch_id?: string;
  state: string;
  dialect: string;
  paths?: { input: string; output: string };
}

/** The batch journal of endpoint `sim` under `out` (entries being written, as dot-named temp files, skipped). */
export function journalEntries(out: string): JournalFile[] {
  const d = join(out, '_batches', 'sim');
  if (!existsSync(d)) return [];
  return readdirSync(d)
    .filter((f) => f.endsWith('.json') && !f.startsWith('.'))
    .flatMap((f) => {
      try {
        return [JSON.parse(readFileSync(join(d, f), 'utf8')) as JournalFile];
      } catch {
        return []; // renamed away between the listing and the read
      }
    });
}
