import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalObjectStore } from '../../src/pipeline/storage/object-store.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { runCli } from '../helpers/cli.js';
import { LONG_TEST_MS, treeProbe } from '../helpers/progress.js';
import { fastSimConfig, tempDir, writeJsonl } from '../helpers/run-setup.js';

describe('reasoning-jury run in deliberation mode', () => {
  it('writes mode, rounds and termination reason of each verdict to the verdicts shard', async () => {
    const records = syntheticRecords(60, { seed: 83, minSteps: 5, maxSteps: 8 });
    const dir = tempDir('delib-run');
    const input = writeJsonl(join(dir, 'in.jsonl'), records);
    const out = join(dir, 'out');
    const config = fastSimConfig(dir, {
      mode: 'deliberation',
      moderator: { id: 'moderator', endpoint: 'sim', model: 'sim-moderator' },
      deliberation: { max_turns: 9, adaptive: { enabled: true } },
    });
    const res = await runCli(['run', '--config', config, '--input', input, '--out', out, '--concurrency', '8', '--range-records', '30', '--progress', 'none'], { progress: treeProbe(out) });
    expect(res.code, res.stderr).toBe(0);
    const rows = await readCommittedRows(new LocalObjectStore(out), 'verdicts');
    expect(rows).toHaveLength(60);
    const reasons = new Map<string, number>();
    for (const r of rows) {
      expect(r.mode).toBe('deliberation');
      const reason = r.termination_reason as string;
      reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
      if (reason.startsWith('skipped_')) expect(r.rounds).toBe(0);
      else {
        expect(['no_new_arguments', 'universal_agreement', 'cycling', 'turn_cap']).toContain(reason);
        expect(r.rounds as number).toBeGreaterThanOrEqual(1);
        expect(r.rounds as number).toBeLessThanOrEqual(9);
      }
    }
    // Adaptive is on: clean traces that nobody flagged are skipped, the rest deliberated.
    expect(reasons.get('skipped_empty') ?? 0).toBeGreaterThan(0);
    expect(rows.filter((r) => !(r.termination_reason as string).startsWith('skipped_')).length).toBeGreaterThan(20);
  }, LONG_TEST_MS);
});
