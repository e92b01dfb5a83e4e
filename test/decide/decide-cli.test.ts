import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { LocalObjectStore } from '../../src/pipeline/object-store.js';
import { listCommitted } from '../../src/pipeline/shard-commit.js';
import { readCommittedRows } from '../../src/pipeline/shard-read.js';
import { defaultProfile, startSimulator, type RunningSimulator } from '../../src/sim/index.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { runCli } from '../helpers/cli.js';

// Policy A: the shipped rules. Policy B: combined conditions over taxonomy, votes and dissent.
const POLICY_A = { rules: [{ name: 'no_verdict', error: true, decision: 'review' }, { name: 'fatal_defect', min_impact: 'fatal', decision: 'drop' }], default: 'keep' };
const POLICY_B = {
  rules: [
    { name: 'computation_major', all: [{ category: ['computation'] }, { min_impact: 'major' }], decision: 'drop' },
    { name: 'weak_support', all: [{ votes_below: 3 }, { confidence_below: 0.95 }], decision: 'review' },
    { name: 'some_dissent', has_dissent: true, decision: 'review' },
    { name: 'logic_leaf', leaf: ['logic.faulty_inference', 'logic.false_math_fact'], decision: 'drop' },
    { name: 'busy', flagged_step_rate_above: 0.2, decision: 'drop' },
  ],
  default: 'keep',
};

const sortById = <T extends Record<string, unknown>>(rows: T[]): T[] => [...rows].sort((a, b) => String(a.record_id).localeCompare(String(b.record_id)));

describe('reasoning-jury decide', () => {
  let sim: RunningSimulator;
  let dir: string;
  const config = (filter: unknown) => ({
    endpoints: { sim: { kind: 'openai', base_url: sim.url, max_retries: 8, backoff_base_ms: 1, backoff_max_ms: 20 } },
    jurors: ['a', 'b', 'c'].map((x) => ({ id: `j-${x}`, endpoint: 'sim', model: `sim-juror-${x}` })),
    consolidator: { id: 'consolidator', endpoint: 'sim', model: 'sim-consolidator' },
    mode: 'consolidation',
    taxonomy: {},
    // Shared: run B replays run A's replies, so both runs hold the same verdicts and only the
    // policy differs (the simulator is not bound to answer a repeated prompt the same way).
    cache: { enabled: true, dir: join(dir, 'cache') },
    filter,
  });
  beforeAll(async () => {
    sim = await startSimulator({ profile: defaultProfile() });
    dir = mkdtempSync(join(tmpdir(), 'rj-decide-'));
    writeFileSync(join(dir, 'in.jsonl'), syntheticRecords(60, { seed: 13, cleanShare: 0.3 }).map((r) => JSON.stringify(r)).join('\n') + '\n');
    writeFileSync(join(dir, 'a.yaml'), YAML.stringify(config(POLICY_A)));
    writeFileSync(join(dir, 'b.yaml'), YAML.stringify(config(POLICY_B)));
    writeFileSync(join(dir, 'policy-b.yaml'), YAML.stringify(POLICY_B));
  });
  afterAll(async () => {
    await sim.close();
  });

  it('with policy B reproduces the decisions of a fresh run with policy B, with zero model calls', async () => {
    const run = (cfg: string, out: string) => runCli(['run', '-c', join(dir, cfg), '-i', join(dir, 'in.jsonl'), '-o', join(dir, out), '--range-records', '16', '--progress', 'none']);
    const a = await run('a.yaml', 'out-a');
    expect(a.code, a.stderr).toBe(0);
    const callsAfterA = sim.stats().total;
    expect(callsAfterA).toBeGreaterThan(0);

    const d = await runCli(['decide', '--policy', join(dir, 'policy-b.yaml'), '--shards', join(dir, 'out-a'), '--out', join(dir, 'out-d')]);
    expect(d.code, d.stderr).toBe(0);
    // The same server that served the run saw nothing from decide.
    expect(sim.stats().total).toBe(callsAfterA);

    const b = await run('b.yaml', 'out-b');
    expect(b.code, b.stderr).toBe(0);
    const callsAfterB = sim.stats().total;
    // Same verdicts: the two runs agree on every column the policy does not shape.
    const verdicts = async (out: string) => sortById(await readCommittedRows(new LocalObjectStore(join(dir, out)), 'verdicts')).map((v) => ({ ...v, latency_ms: 0, config_hash: '' })); // the policy is part of config_hash
    expect(await verdicts('out-b')).toEqual(await verdicts('out-a'));

    const rows = async (out: string) => sortById(await readCommittedRows(new LocalObjectStore(join(dir, out)), 'decisions'));
    const [fromA, decided, fresh] = await Promise.all([rows('out-a'), rows('out-d'), rows('out-b')]);
    expect(decided).toHaveLength(60);
    expect(decided).toEqual(fresh);
    // The comparison has teeth: B decides differently from A, and several of B's rules fire.
    expect(decided.map((r) => r.decision)).not.toEqual(fromA.map((r) => r.decision));
    const fired = new Set(decided.map((r) => String(r.reason).split(':')[0]));
    expect(fired.size).toBeGreaterThanOrEqual(3);
    // The same ranges, under the same names.
    const names = async (out: string) => (await listCommitted(new LocalObjectStore(join(dir, out)))).map((m) => `${m.first}-${m.last}`);
    expect(await names('out-d')).toEqual(await names('out-a'));
    expect(d.stdout).toMatch(/ranges decided\s+4 \(already in --out, skipped: 0\)/);

    // Resumable, exactly once: a second decide writes nothing new.
    const again = await runCli(['decide', '--policy', join(dir, 'policy-b.yaml'), '--shards', join(dir, 'out-a'), '--out', join(dir, 'out-d')]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/skipped: 4/);
    expect(await rows('out-d')).toEqual(decided);

    // Another policy into the same --out is refused with one line.
    const other = await runCli(['decide', '--policy', join(dir, 'a.yaml'), '--shards', join(dir, 'out-a'), '--out', join(dir, 'out-d')]);
    expect(other.code).toBe(2);
    expect(other.stderr.trim().split('\n')).toHaveLength(1);
    expect(other.stderr).toMatch(/decided with another policy/);
    // Neither the resumed nor the refused decide called a model.
    expect(sim.stats().total).toBe(callsAfterB);
  });
});
