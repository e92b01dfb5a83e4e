import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isInventedQuote } from '../../src/sim/index.js';
import { inventingProfile } from '../../src/cli/sim-grounding.js';
import { ladderConfig } from '../../src/cli/sim-ladder.js';
import { judgeOnSim } from '../helpers/sim-judge.js';
import { synthRecords } from '../sim/helpers.js';

/**
 * Deliberation's grounding checker with its model call, through the real model layer and the
 * simulator: jurors that invent raise claims quoting words no trace holds, the deterministic
 * check cannot ground them, so the checker asks a model (phase `grounding`). The calls show in
 * the ledger and the audit log under their own phase and replay from the response cache.
 */
const dir = mkdtempSync(join(tmpdir(), 'rj-checker-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
// seed, sizes and rate fixed before looking at any result
const records = synthRecords(16, { steps: 6, errorRate: 0.3, seed: 'checker-sim' });

function judge(cacheDir: string, audit: string | null) {
  const config = { ...ladderConfig(), mode: 'deliberation' as const, moderator: { id: 'moderator', endpoint: 'sim', model: 'moderator-careful' }, grounding: { policy: 'keep' as const, checker: { model: true } }, cache: { enabled: true, dir: cacheDir } };
  return judgeOnSim(records, inventingProfile(0.5), config, audit);
}

describe('the deliberation grounding checker through the gateway and the simulator', () => {
  it('invented claims go to the model check: own phase in ledger and audit log, replayed from the cache', async () => {
    const audit = join(dir, 'audit.jsonl');
    const first = await judge(join(dir, 'cache'), audit);
    const checks = first.verdicts.flatMap((v) => v.grounding?.claim_checks ?? []);
    const byModel = checks.filter((c) => c.decided_by === 'model');
    // every model-decided claim is one the deterministic check could not ground: an invented quote
    expect(byModel.length).toBeGreaterThan(3);
    expect(byModel.every((c) => c.quoted.split(' | ').every((q) => isInventedQuote(q)))).toBe(true);
    expect(byModel.some((c) => c.result === 'ungrounded')).toBe(true);
    expect(first.ledger.by_phase.grounding?.calls).toBe(byModel.length);
    const phases = readFileSync(audit, 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { phase: string }).phase);
    expect(phases.filter((p) => p === 'grounding').length).toBe(byModel.length);

    const again = await judge(join(dir, 'cache'), null);
    expect(again.ledger.calls_made).toBe(0);
    expect(again.ledger.by_phase.grounding?.cached).toBe(byModel.length);
    expect(again.verdicts.map((v) => [v.defects, v.grounding])).toEqual(first.verdicts.map((v) => [v.defects, v.grounding]));
  });
});
