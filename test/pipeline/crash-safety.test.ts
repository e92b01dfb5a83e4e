import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readParquetRows } from '../../src/pipeline/commit/shard-read.js';
import { LocalObjectStore } from '../../src/pipeline/storage/object-store.js';
import { listCommitted, verifyCommitted } from '../../src/pipeline/commit/shard-commit.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { createRng } from '../../src/util/prng.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { runAndKill, runCli } from '../helpers/cli.js';
import { LONG_TEST_MS, treeProbe } from '../helpers/progress.js';
import { fastSimConfig, tempDir, writeJsonl } from '../helpers/run-setup.js';
import { readFileSync } from 'node:fs';

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));
}

describe('crash safety', () => {
  it('SIGKILL at random points of a 3,000-record run, then resume: each record id exactly once in every table and the corpus', async () => {
    const dir = tempDir('crash');
    const records = syntheticRecords(3000, { seed: 77 });
    const input = writeJsonl(join(dir, 'in.jsonl'), records);
    const out = join(dir, 'out');
    // ~10 ms per call keeps the run going long enough to be killed in the middle of things.
    // One juror, no phase 2: the commit protocol is what is tested, and it is a quarter of the CPU.
    const config = fastSimConfig(dir, { mode: 'single', jurors: [{ id: 'jury-0', endpoint: 'sim', model: 'sim-juror-a' }] }, { latency_ms: { median: 8, sigma: 0.3, max: 30 } });
    const args = ['run', '--config', config, '--input', input, '--out', out, '--concurrency', '32', '--range-records', '250', '--progress', 'none'];
    const rng = createRng(['crash-test', 1]);
    let kills = 0;
    const committedBetween: number[] = [];
    const committedCount = async () => (await listCommitted(new LocalObjectStore(out)).catch(() => [])).length;
    for (let i = 0; i < 5; i++) {
      const before = await committedCount();
      // 0-1 more ranges committed, then 0-400 ms: lands anywhere in judging, writing parts or the manifest.
      const moreRanges = Math.floor(rng.next() * 2);
      const delay = Math.floor(rng.next() * 400);
      const r = await runAndKill(args, out, async () => (await committedCount()) >= before + moreRanges, delay);
      if (r.killed) kills++;
      committedBetween.push(await committedCount());
    }
    expect(kills, 'the run must really be killed mid-way for this test to mean anything').toBeGreaterThanOrEqual(4);
    expect(committedBetween[committedBetween.length - 1]!).toBeLessThan(12);
    const final = await runCli(args, { progress: treeProbe(out) });
    console.log(`committed manifests after each kill: ${committedBetween.join(", ")}\n${final.stdout}`);
    expect(final.code, final.stderr).toBe(0);
    expect(final.stdout).toMatch(/already committed \(skipped\)\s+[1-9]/);

    const store = new LocalObjectStore(out);
    const manifests = await listCommitted(store);
    for (const m of manifests) expect(await verifyCommitted(store, m)).toEqual([]);
    const verdicts = await readCommittedRows(store, 'verdicts');
    const ids = verdicts.map((v) => String(v.record_id));
    expect(ids.length).toBe(3000);
    expect(new Set(ids).size).toBe(3000);
    expect(new Set(ids)).toEqual(new Set(records.map((r) => r.id)));
    // Every other table too, through the manifests: one decision per id, steps and defects once each.
    const decisions = await readCommittedRows(store, 'decisions');
    expect(decisions.length).toBe(3000);
    expect(new Set(decisions.map((d) => String(d.record_id)))).toEqual(new Set(ids));
    const steps = await readCommittedRows(store, 'steps');
    expect(new Set(steps.map((s) => `${String(s.record_id)}/${String(s.step_index)}`)).size).toBe(steps.length);
    expect(steps.length).toBe(verdicts.reduce((n, v) => n + Number(v.n_steps), 0));
    const defects = await readCommittedRows(store, 'defects');
    expect(defects.length).toBeGreaterThan(0);
    expect(new Set(defects.map((d) => String(d.defect_id))).size).toBe(defects.length);
    expect(defects.length).toBe(verdicts.reduce((n, v) => n + Number(v.n_defects), 0));
    expect(await readCommittedRows(store, 'dead_letters')).toEqual([]);
    // The corpus (on by default): every range committed one part per decision, and across all
    // decision= partitions each record id is there exactly once, with the decision it was given.
    const corpusFiles = manifests.flatMap((m) => m.files.filter((f) => f.table === 'corpus'));
    expect(corpusFiles.length).toBe(3 * manifests.length);
    expect(corpusFiles.every((f) => f.format === 'parquet')).toBe(true);
    const corpus: { id: string; decision: string; folder: string }[] = [];
    for (const f of corpusFiles) {
      const folder = /\/decision=(\w+)\//.exec(`/${f.key}`)![1]!;
      for (const row of await readParquetRows(readFileSync(join(out, f.key)), { columns: ['record_id', 'decision'] })) corpus.push({ id: String(row.record_id), decision: String(row.decision), folder });
    }
    expect(corpus.length).toBe(3000);
    expect(new Set(corpus.map((c) => c.id))).toEqual(new Set(ids));
    expect(corpus.every((c) => c.decision === c.folder)).toBe(true);
    const decisionOf = new Map(decisions.map((d) => [String(d.record_id), String(d.decision)]));
    expect(corpus.every((c) => decisionOf.get(c.id) === c.decision)).toBe(true);
    // `shards list` offers exactly those files to a reader.
    const listed = await runCli(['shards', 'list', out, '--table', 'corpus', '--format', 'parquet']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout.trim().split('\n').sort()).toEqual(corpusFiles.map((f) => join(out, f.key)).sort());
    // Folder readers that ignore manifests see the same: half-written ranges were rebuilt
    // under the same names, and temp files are hidden (dot-prefixed).
    const visible = walk(join(out, 'verdicts')).filter((f) => f.endsWith('.parquet') && !f.split('/').pop()!.startsWith('.'));
    const folderIds: string[] = [];
    for (const f of visible) for (const row of await readParquetRows(readFileSync(f))) folderIds.push(String(row.record_id));
    expect(folderIds.length).toBe(3000);
    expect(new Set(folderIds).size).toBe(3000);
    const corpusVisible = walk(join(out, 'corpus')).filter((f) => f.endsWith('.parquet') && !f.split('/').pop()!.startsWith('.'));
    expect(corpusVisible.sort()).toEqual(corpusFiles.map((f) => join(out, f.key)).sort());
    console.log(`crash test: ${kills} kills, manifests after each: ${committedBetween.join(', ')}, final ranges: ${manifests.length}`);
  }, LONG_TEST_MS);
});
