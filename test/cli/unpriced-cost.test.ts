import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { readFileSync, writeFileSync } from 'node:fs';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { fastSimConfig, pyenvPython, tempDir, writeJsonl } from '../helpers/run-setup.js';
import { runCli } from '../helpers/cli.js';

const python = pyenvPython();

// pyarrow reads the committed verdict parts (from the manifests) and reports cost_usd per record.
const READ_COST = `
import json, sys, pyarrow.parquet as pq
out = sys.argv[1]
import glob, os
rows = []
for m in sorted(glob.glob(os.path.join(out, '_commits', '*.json'))):
    for f in json.load(open(m))['files']:
        if f['table'] == 'verdicts' and f['format'] == 'parquet':
            t = pq.read_table(os.path.join(out, f['key']))
            field = t.schema.field('cost_usd')
            rows += [{'id': r, 'cost': c} for r, c in zip(t.column('record_id').to_pylist(), t.column('cost_usd').to_pylist())]
            nullable = field.nullable
print(json.dumps({'rows': rows, 'nullable': nullable, 'type': str(field.type)}))
`;

describe('models without a price', () => {
  it.skipIf(python === null)('give null cost_usd (not 0) in the shards, one warning per model at start, and are named in the summary', async () => {
    const dir = tempDir('unpriced');
    const config = fastSimConfig(dir);
    // fastSimConfig prices sim-juror-a only: b, c and the consolidator are unpriced.
    const input = writeJsonl(join(dir, 'in.jsonl'), syntheticRecords(12, { seed: 4 }));
    const run = async (cfg: string, out: string) => {
      const res = await runCli(['run', '-c', cfg, '-i', input, '-o', join(dir, out), '--progress', 'none']);
      expect(res.code, res.stderr).toBe(0);
      return res;
    };
    const res = await run(config, 'out');
    const warnings = res.stderr.split('\n').filter((l) => /has no price/.test(l));
    expect(warnings).toHaveLength(3);
    for (const m of ['sim-juror-b', 'sim-juror-c', 'sim-consolidator']) expect(warnings.filter((w) => w.includes(`"${m}"`))).toHaveLength(1);
    expect(res.stdout).toMatch(/models without a price \(cost_usd null\)\s+sim-consolidator, sim-juror-b, sim-juror-c/);
    expect(res.stdout).toMatch(/records with unknown cost \(not in the cost above\)\s+12\n/);
    const read = (out: string) => JSON.parse(execFileSync(python!, ['-c', READ_COST, join(dir, out)], { encoding: 'utf8' })) as { rows: Array<{ id: string; cost: number | null }>; nullable: boolean; type: string };
    const unpriced = read('out');
    expect(unpriced.rows).toHaveLength(12);
    expect(unpriced.nullable).toBe(true);
    expect(unpriced.type).toBe('double');
    for (const r of unpriced.rows) expect(r.cost).toBeNull();

    // The same jury with every model priced: real numbers, no warning, no unpriced line.
    const raw = YAML.parse(readFileSync(config, 'utf8')) as Record<string, unknown>;
    const price = { input_per_mtok: 0.15, output_per_mtok: 0.62 };
    const priced = join(dir, 'priced.yaml');
    writeFileSync(priced, YAML.stringify({ ...raw, prices: Object.fromEntries(['sim-juror-a', 'sim-juror-b', 'sim-juror-c', 'sim-consolidator'].map((m) => [m, price])) }));
    const ok = await run(priced, 'out-priced');
    expect(ok.stderr).not.toMatch(/has no price/);
    expect(ok.stdout).not.toMatch(/without a price/);
    for (const r of read('out-priced').rows) expect(r.cost).toBeGreaterThan(0);
  });
});
