import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readLabels } from '../../src/induce/labels.js';
import { parseTaxonomy, TaxonomyIndex, type Taxonomy } from '../../src/taxonomy/schema.js';
import { BIN, guardChild, runCli } from '../helpers/cli.js';
import { LONG_TEST_MS, treeProbe } from '../helpers/progress.js';
import { fastSimConfig, tempDir } from '../helpers/run-setup.js';
import { GENERATORS, writeDefectShards } from './fixtures.js';

const N = 2000;

function induceArgs(config: string, shards: string, out: string, extra: string[] = []): string[] {
  return ['taxonomy', 'induce', '--config', config, '--defects', shards, '--out', join(out, 'taxonomy.json'), '--name', 'fixture taxonomy', '--no-progress', ...extra];
}

/**
 * Start induce and SIGKILL it once `ready(state)` holds; resolves whether it was really killed.
 * Until then its output folder (the checkpoint) must keep changing, or it is killed as stalled.
 */
function killWhen(args: string[], out: string, stateFile: string, ready: (s: { grow: { next: number }; assign: { next: number; pass: number } | null }) => boolean): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: 'ignore' });
    const guard = guardChild(child, { progress: treeProbe(out), what: 'taxonomy induce (to be killed)' });
    let exited = false;
    child.on('exit', (_c, signal) => {
      exited = true;
      guard.stop();
      const stalled = guard.stalled();
      if (stalled) reject(new Error(stalled));
      else resolve(signal === 'SIGKILL');
    });
    const poll = () => {
      if (exited) return;
      try {
        if (ready(JSON.parse(readFileSync(stateFile, 'utf8')))) return void child.kill('SIGKILL');
      } catch {
        // not written yet, or mid-rename
      }
      setTimeout(poll, 15);
    };
    poll();
  });
}

describe(`taxonomy induce over ${N} simulated defects`, () => {
  const dir = tempDir('induce');
  const shards = join(dir, 'shards');
  const config = fastSimConfig(dir, { cache: { enabled: true, dir: join(dir, 'cache') } });
  let first: { stdout: string; taxonomy: Taxonomy; json: string; labelsBytes: Buffer };

  beforeAll(async () => {
    await writeDefectShards(shards, N, 5);
    const out = join(dir, 'run1');
    const r = await runCli(induceArgs(config, shards, out), { progress: treeProbe(out) });
    expect(r.code, r.stderr).toBe(0);
    const json = readFileSync(join(out, 'taxonomy.json'), 'utf8');
    first = { stdout: r.stdout, taxonomy: parseTaxonomy(JSON.parse(json)), json, labelsBytes: readFileSync(join(out, 'taxonomy.labels.parquet')) };
  }, LONG_TEST_MS);

  it('produces a two-level taxonomy with stable ids and a record of how it was made', () => {
    const t = first.taxonomy;
    expect(t.categories.length).toBeGreaterThanOrEqual(3);
    const leaves = t.categories.flatMap((c) => c.leaves);
    expect(leaves.length).toBeGreaterThanOrEqual(8);
    for (const c of t.categories) {
      expect(c.leaves.length).toBeGreaterThan(0);
      for (const l of c.leaves) expect(Object.keys(l).sort()).toEqual(['description', 'id', 'name']); // nothing deeper
    }
    const ind = t.induction as { defects: number; generators: Record<string, number>; grow: { batches: number }; assignment: { unassigned: number; assigned: number } };
    expect(ind.defects).toBe(N);
    expect(Object.keys(ind.generators).sort()).toEqual([...GENERATORS]);
    expect(ind.grow.batches).toBe(N / 40);
    expect(ind.assignment).toMatchObject({ assigned: N, unassigned: 0 });
    expect(first.stdout).toMatch(new RegExp(`${N} of ${N} defects assigned`));
  });

  it('every defect is assigned a leaf of the induced taxonomy', async () => {
    const labels = await readLabels(join(dir, 'run1', 'taxonomy.labels.parquet'));
    expect(labels).toHaveLength(N);
    expect(new Set(labels.map((l) => l.defect_id)).size).toBe(N);
    const index = new TaxonomyIndex(first.taxonomy);
    for (const l of labels) {
      expect(l.taxonomy_status).toBe('assigned');
      expect(index.leaf(l.leaf_id!)?.category.id, l.defect_id).toBe(l.category_id);
    }
    // Several leaves are really used, not one catch-all.
    expect(new Set(labels.map((l) => l.leaf_id)).size).toBeGreaterThanOrEqual(6);
  });

  it('a second run with the cache replays identically, making no new calls', async () => {
    const out = join(dir, 'run2');
    const r = await runCli(induceArgs(config, shards, out), { progress: treeProbe(out) });
    expect(r.code, r.stderr).toBe(0);
    const calls = /calls:\s+(\d+) \((\d+) from the cache\)/.exec(r.stdout)!;
    expect(Number(calls[1])).toBeGreaterThan(N / 40 + 1 + N / 20 - 1);
    expect(calls[2]).toBe(calls[1]);
    expect(readFileSync(join(out, 'taxonomy.json'), 'utf8')).toBe(first.json);
    expect(readFileSync(join(out, 'taxonomy.labels.parquet')).equals(first.labelsBytes)).toBe(true);
  }, LONG_TEST_MS);

  it('is resumable: killed while growing and while assigning, it ends where an uninterrupted run does', async () => {
    // No cache, and ~10 ms per call so the kills land mid-run.
    const slow = fastSimConfig(join(dir), {}, { latency_ms: { median: 10, sigma: 0.2, max: 20 } });
    const out = join(dir, 'run3');
    const args = induceArgs(slow, shards, out, ['--no-cache']);
    const state = join(out, 'taxonomy.json.work', 'state.json');
    expect(await killWhen(args, out, state, (s) => s.grow.next >= 5 && s.grow.next < 40), 'killed while growing').toBe(true);
    expect(await killWhen(args, out, state, (s) => (s.assign?.next ?? 0) >= 8 && s.assign!.pass === 0), 'killed while assigning').toBe(true);
    expect(existsSync(join(out, 'taxonomy.json'))).toBe(false);
    const r = await runCli(args, { progress: treeProbe(out) });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/resumed from a checkpoint/);
    expect(readFileSync(join(out, 'taxonomy.json'), 'utf8')).toBe(first.json);
    expect(readFileSync(join(out, 'taxonomy.labels.parquet')).equals(first.labelsBytes)).toBe(true);
  }, LONG_TEST_MS);

  it('refuses a checkpoint made for other settings, and bad input, with exit code 2', async () => {
    const out = join(dir, 'run1');
    const r = await runCli(induceArgs(config, shards, out, ['--batch-size', '7']));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/checkpoint for other input or settings/);
    const empty = await runCli(induceArgs(config, join(dir, 'nothing'), join(dir, 'run4')));
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/no such folder/);
  });
});
