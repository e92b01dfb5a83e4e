import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { passesConfig, passesProfile } from '../../src/cli/sim-ladder.js';
import { judgeOnSim } from '../helpers/sim-judge.js';
import { synthRecords } from '../sim/helpers.js';

/**
 * The passes through the real model layer and the simulator: their own phases in the ledger and
 * the audit log, a replay from the response cache with no new call, and a pass that always fails
 * leaving every verdict kept and marked.
 */
const dir = mkdtempSync(join(tmpdir(), 'rj-passes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const records = synthRecords(24, { steps: 6, errorRate: 0.3, seed: 'passes-sim' });

function judge(profileOver: (p: ReturnType<typeof passesProfile>) => void, cacheDir: string, audit: string | null) {
  const profile = passesProfile();
  profileOver(profile);
  return judgeOnSim(records, profile, { ...passesConfig(), cache: { enabled: true, dir: cacheDir } }, audit);
}

describe('verification passes through the gateway and the simulator', () => {
  it('own phases in ledger and audit log, replayed from the cache', async () => {
    const audit = join(dir, 'audit.jsonl');
    const first = await judge(() => {}, join(dir, 'cache'), audit);
    expect(first.ledger.by_phase.removal?.calls).toBeGreaterThan(10);
    expect(first.ledger.by_phase.arbiter?.calls).toBeGreaterThan(10);
    expect(first.ledger.by_participant.removal?.calls).toBe(first.ledger.by_phase.removal?.calls);
    expect(first.verdicts.some((v) => (v.dropped_negatives?.length ?? 0) > 0)).toBe(true);
    expect(first.verdicts.some((v) => (v.negative_adjudications?.length ?? 0) > 0)).toBe(true);
    const phases = new Set(readFileSync(audit, 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { phase: string }).phase));
    expect(phases).toContain('removal');
    expect(phases).toContain('arbiter');
    const again = await judge(() => {}, join(dir, 'cache'), null);
    expect(again.ledger.calls_made).toBe(0);
    expect(again.ledger.by_phase.removal?.cached).toBe(first.ledger.by_phase.removal?.calls);
    expect(again.verdicts.map((v) => [v.defects, v.dropped_negatives, v.negative_adjudications])).toEqual(first.verdicts.map((v) => [v.defects, v.dropped_negatives, v.negative_adjudications]));
  });

  it('a removal pass that always answers broken JSON: every verdict kept, marked, with the arbiter applied', async () => {
    const out = await judge((p) => {
      p.models!['moderator-careful'] = { ...p.models!['moderator-careful'], removal: { fail_rate: 1 } };
    }, join(dir, 'cache-fail'), null);
    const ran = out.verdicts.filter((v) => v.usage.some((u) => u.phase === 'removal'));
    expect(ran.length).toBeGreaterThan(10);
    for (const v of ran) {
      expect(v.error).toBeNull();
      expect(v.dropped_negatives).toBeUndefined();
      expect(v.degraded_reason).toMatch(/removal pass failed/);
      expect(v.negative_adjudications).toBeDefined();
    }
  });
});
