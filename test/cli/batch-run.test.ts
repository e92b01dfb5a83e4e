/**
 * `run --batch` end to end: the CLI against the juror simulator run as its own process
 * (`reasoning-jury simulate`, so its Batch API outlives a killed run and GET /sim/stats can be
 * asked between runs), through the real openai client.
 *
 * - ProcessBench records with consolidation: every record judged, no online chat call, and the
 *   verdict, defect, step and decision rows equal to an online run's, call metadata aside
 *   (NOT_COMPARED: `latency_ms` is measured wall time, and a batched call's `cost_usd` is at the
 *   batch rate, half the online one here).
 * - SIGKILL while a batch is in progress, then the same command: each record once in every
 *   table, and every request in exactly one accepted batch.
 * - the summary shows the batch rows and the cost at batch prices.
 */
import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { benchRecords } from '../../bench/common.js';
import { batchConfig, journalEntries, rows, startSim as startSimIn, tableOf, TABLES, type Sim } from '../helpers/batch-run.js';
import { runAndKill, runCli } from '../helpers/cli.js';
import { LONG_TEST_MS, treeProbe } from '../helpers/progress.js';
import { tempDir, writeJsonl } from '../helpers/run-setup.js';

const N = Number(process.env.RJ_BATCH_RECORDS ?? 2000);
const dir = tempDir('batch-run');
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const startSim = (name: string, gold: string, batch: Record<string, unknown>): Promise<Sim> => startSimIn(dir, children, name, gold, batch);
const config = (name: string, sim: Sim, extra: Record<string, unknown> = {}): string => batchConfig(dir, name, sim.url, extra);

const input = writeJsonl(join(dir, 'processbench.jsonl'), benchRecords(N).records);

describe('run --batch against the simulator', () => {
  it(`judges ${N} ProcessBench records with no online call, rows equal to an online run`, async () => {
    const sim = await startSim('equal', input, { completion_delay_ms: 50 });
    const cfg = config('equal', sim);
    const online = join(dir, 'online');
    const a = await runCli(['run', '-c', cfg, '-i', input, '-o', online, '--progress', 'none', '--concurrency', '16'], { progress: treeProbe(online) });
    expect(a.code, a.stderr).toBe(0);
    const before = await sim.stats();
    expect(before.online.chat_calls).toBeGreaterThan(0);
    expect(before.accepted).toHaveLength(0);
    const batched = join(dir, 'batched');
    const b = await runCli(['run', '-c', cfg, '-i', input, '-o', batched, '--progress', 'none', '--batch'], { progress: treeProbe(batched) });
    expect(b.code, b.stderr).toBe(0);
    const after = await sim.stats();
    expect(after.online.chat_calls).toBe(before.online.chat_calls);
    expect(after.accepted.length).toBeGreaterThanOrEqual(2); // Phase 1, then consolidation
    expect(b.stdout).toMatch(/batches submitted \/ completed \/ failed or expired\s+\d+ \/ \d+ \/ 0/);
    expect(b.stdout).toMatch(new RegExp(`judged\\s+${N}\\b`));
    for (const table of TABLES) expect(await tableOf(batched, table), table).toEqual(await tableOf(online, table));
    // the same tokens at half the price
    const cost = (s: string) => Number(/cost \(USD\)\s+([\d.]+)/.exec(s)![1]);
    expect(cost(b.stdout)).toBeCloseTo(cost(a.stdout) / 2, 5);
  }, LONG_TEST_MS);

  it('SIGKILL while a batch is in progress, then the same command: each record once, each request in one accepted batch', async () => {
    const n = Math.min(N, 300);
    const small = writeJsonl(join(dir, 'small.jsonl'), benchRecords(n).records);
    const sim = await startSim('kill', small, { completion_delay_ms: 1500 });
    const cfg = config('kill', sim);
    const out = join(dir, 'killed');
    const args = ['run', '-c', cfg, '-i', small, '-o', out, '--progress', 'none', '--batch'];
    const pending = async () => journalEntries(out).some((e) => e.batch_id !== undefined);
    const { killed } = await runAndKill(args, out, pending, 200);
    expect(killed).toBe(true);
    const res = await runCli(args, { progress: treeProbe(out) });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toMatch(/re-attaching to batch/);
    for (const table of ['verdicts', 'decisions'] as const) {
      const ids = (await rows(out, table)).map((r) => String(r.record_id));
      expect(ids.length, table).toBe(n);
      expect(new Set(ids).size, table).toBe(n);
    }
    // Steps and defects: every row once (a record's rows written twice would repeat its keys),
    // and each step count what the record's verdict says.
    const verdictSteps = new Map((await rows(out, 'verdicts')).map((v) => [String(v.record_id), Number(v.n_steps)]));
    const steps = (await rows(out, 'steps')).map((r) => `${String(r.record_id)}#${String(r.step_index)}`);
    expect(new Set(steps).size).toBe(steps.length);
    expect(steps.length).toBe([...verdictSteps.values()].reduce((a, b) => a + b, 0));
    const defects = (await rows(out, 'defects')).map((r) => String(r.defect_id));
    expect(new Set(defects).size).toBe(defects.length);
    expect(defects.length).toBeGreaterThan(0);
    const stats = await sim.stats();
    const all = stats.accepted.flatMap((b) => b.custom_ids);
    expect(new Set(all).size).toBe(all.length);
    expect((await sim.stats()).online.chat_calls).toBe(0);
  }, LONG_TEST_MS);

  it('an expired batch and error-file lines: only those requests go again, each once, and every verdict is full', async () => {
    const small = writeJsonl(join(dir, 'faults.jsonl'), benchRecords(40).records);
    const sim = await startSim('faults', small, { completion_delay_ms: 50, fail_custom_ids: { rate: 0.1, seed: 3 }, expire_batches: { nth: [1], completed_share: 0.5 } });
    const out = join(dir, 'faults');
    const res = await runCli(['run', '-c', config('faults', sim), '-i', small, '-o', out, '--progress', 'none', '--batch'], { progress: treeProbe(out) });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/degraded verdicts\s+0\b/);
    expect(res.stdout).toMatch(/no verdict \(too few jurors\)\s+0\b/);
    const stats = await sim.stats();
    expect(stats.accepted[0]!.status).toBe('expired');
    const again = new Set(stats.accepted.flatMap((b) => [...b.expired, ...b.failed]));
    expect(stats.accepted[0]!.expired.length).toBeGreaterThan(0);
    expect(stats.accepted.flatMap((b) => b.failed).length).toBeGreaterThan(0);
    const seen = new Map<string, number>();
    for (const id of stats.accepted.flatMap((b) => b.custom_ids)) seen.set(id, (seen.get(id) ?? 0) + 1);
    // a failed or expired request is in exactly one more batch; every other request in one
    for (const [id, times] of seen) expect(times, id).toBe(again.has(id) ? 2 : 1);
    expect(stats.online.chat_calls).toBe(0);
  }, LONG_TEST_MS);
});
