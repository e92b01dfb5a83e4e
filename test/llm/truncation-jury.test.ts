/**
 * A juror whose replies are cut at max_tokens: the real openai client against the simulator,
 * whose replies end with finish_reason "length" when the budget is smaller than the reply. The
 * juror fails at once (one request per record, no re-ask) and the verdict says why.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultConfigInput } from '../../src/config/load.js';
import { TRUNCATED_REASON } from '../../src/llm/types.js';
import { buildGoldIndex, defaultProfile, startSimulator, withoutFaults } from '../../src/sim/index.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { readAudit } from '../deliberation/helpers.js';
import { judgeAll, juryOn, withRuntime } from '../helpers/jury.js';

describe('jury: a juror cut at max_tokens', () => {
  it('is a degraded juror with reason "truncated at max_tokens (3)", without a re-ask', async () => {
    const records = syntheticRecords(6, { seed: 4 });
    const sim = await startSimulator({ profile: withoutFaults(defaultProfile()), gold: buildGoldIndex(records) });
    try {
      // 3 tokens = 12 characters for the simulator: shorter than any reply, even {"negatives":[]}.
      const jurors = defaultConfigInput().jurors!.map((j) => (j.id === 'jury-1' ? { ...j, max_tokens: 3 } : j));
      const audit = join(mkdtempSync(join(tmpdir(), 'rj-trunc-')), 'audit.jsonl');
      const verdicts = await withRuntime(juryOn(sim.url, { jurors }), (rt) => judgeAll(rt, records), audit);
      for (const v of verdicts) {
        expect(v.degraded).toBe(true);
        expect(v.error).toBeNull();
        const j1 = v.phase1_judgements.find((j) => j.juror_id === 'jury-1')!;
        expect(j1.ok).toBe(false);
        expect(j1.error).toBe(`jury-1 (sim-juror-b@sim, phase1) failed after 1 attempt(s): ${TRUNCATED_REASON} (3)`);
        expect(v.degraded_reason).toBe(`1 of 3 jurors failed (jury-1: ${j1.error})`);
        expect(v.phase1_judgements.filter((j) => j.ok)).toHaveLength(2);
      }
      const lines = readAudit(audit).filter((l) => l.participant === 'jury-1');
      expect(lines).toHaveLength(records.length); // one attempt per record: no retry, no re-ask
      for (const l of lines) expect(l).toMatchObject({ turn: 'initial', outcome: 'error', error: `${TRUNCATED_REASON} (3)`, finish_reason: 'length', sampling: { max_tokens: 3 } });
    } finally {
      await sim.close();
    }
  });
});
