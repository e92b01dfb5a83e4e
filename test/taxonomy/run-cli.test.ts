import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { LocalObjectStore } from '../../src/pipeline/storage/object-store.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { loadTaxonomy, TaxonomyIndex } from '../../src/taxonomy/schema.js';
import { runCli } from '../helpers/cli.js';
import { LONG_TEST_MS, treeProbe } from '../helpers/progress.js';
import { fastSimConfig, tempDir, writeJsonl } from '../helpers/run-setup.js';

const index = new TaxonomyIndex(loadTaxonomy());

/** fastSimConfig with its YAML edited by `edit`. */
function config(dir: string, edit: (c: Record<string, unknown>) => void): string {
  const path = fastSimConfig(dir);
  const c = YAML.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  edit(c);
  writeFileSync(path, YAML.stringify(c));
  return path;
}

async function run(dir: string, cfg: string, n: number, extra: string[] = []) {
  const input = writeJsonl(join(dir, 'in.jsonl'), syntheticRecords(n, { seed: 41 }));
  const out = join(dir, 'out');
  const r = await runCli(['run', '--config', cfg, '--input', input, '--out', out, '--concurrency', '16', '--progress', 'none', ...extra], { progress: treeProbe(out) });
  const store = new LocalObjectStore(out);
  return { ...r, defects: r.code === 0 ? await readCommittedRows(store, 'defects') : [], verdicts: await readCommittedRows(store, 'verdicts').catch(() => []) };
}

describe('run with taxonomy assignment on', () => {
  it('fills category and leaf for every defect (or unassigned with a reason), never an unknown id', async () => {
    const dir = tempDir('tax-run');
    const r = await run(dir, config(dir, (c) => (c.taxonomy = { batch_size: 5 })), 150);
    expect(r.code, r.stderr).toBe(0);
    expect(r.defects.length).toBeGreaterThan(50);
    let assigned = 0;
    for (const d of r.defects) {
      if (d.taxonomy_status === 'assigned') {
        assigned++;
        expect(index.leaf(String(d.leaf_id))?.category.id, String(d.leaf_id)).toBe(d.category_id);
      } else {
        expect(String(d.taxonomy_status)).toMatch(/^unassigned:(invalid_leaf|omitted|call_failed)$/);
        expect([d.leaf_id, d.category_id]).toEqual([null, null]);
      }
    }
    // The simulator slips now and then; retries fix nearly all of it.
    expect(assigned).toBeGreaterThanOrEqual(r.defects.length - 2);
    expect(new Set(r.defects.map((d) => d.category_id)).size).toBeGreaterThan(2);
  }, LONG_TEST_MS);

  // Until issue 14 a refused assigner endpoint left every defect `unassigned:call_failed` and the
  // run exited 0: committed, never to be labelled. A refused connection is an outage now: the run
  // waits for the endpoint, and past --max-outage stops with one line, committing none of it.
  it('an assigner endpoint that is down stops the run after --max-outage (exit 3), committing nothing half-labelled', async () => {
    const dir = tempDir('tax-down');
    const cfg = config(dir, (c) => {
      (c.endpoints as Record<string, unknown>).down = { base_url: 'http://127.0.0.1:9/v1', max_retries: 0, timeout_ms: 2000 };
      c.taxonomy = { assigner: { id: 'taxonomist', endpoint: 'down', model: 'nobody' }, max_rounds: 2 };
    });
    const r = await run(dir, cfg, 20, ['--max-outage', '2s']);
    expect(r.code, r.stderr).toBe(3);
    // The preflight meets the refusal first: it waits for the endpoint as the jury's calls would.
    expect(r.stderr).toMatch(/reasoning-jury: endpoint "down" has been down \(unreachable or failing every call\) for \d+ s, longer than the allowed outage of 2 s/);
    expect(r.verdicts).toEqual([]); // every record needed the assigner: none is committed
  }, LONG_TEST_MS);

  it('config mistakes are exit code 2 with the path named', async () => {
    const dir = tempDir('tax-bad');
    const unknown = await run(dir, config(dir, (c) => (c.taxonomy = { assigner: { id: 't', endpoint: 'nope', model: 'm' } })), 2);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/taxonomy\.assigner\.endpoint: unknown endpoint "nope"/);
    const missing = await run(dir, config(dir, (c) => (c.taxonomy = { file: join(dir, 'missing.json') })), 2);
    expect(missing.code).toBe(2);
    // Checked when the config loads (issue 13): one line naming the key and the path.
    expect(missing.stderr).toMatch(/taxonomy\.file: no such file .*missing\.json/);
    const typo = await run(dir, config(dir, (c) => (c.taxonomy = { batchsize: 3 })), 2);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/taxonomy/);
  }, LONG_TEST_MS);
});
