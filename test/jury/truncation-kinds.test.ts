/**
 * A reply cut at max_tokens never becomes an accepted result, in every kind of call the jury
 * makes: the simulator behind the real openai client cuts replies longer than max_tokens and says
 * finish_reason "length". Budgets come from seats or from the per-kind `max_tokens` section.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { JuryConfigInput } from '../../schemas/config.js';
import type { Phase } from '../../schemas/usage.js';
import type { Verdict } from '../../schemas/verdict.js';
import type { AuditEntry } from '../../src/llm/audit.js';
import { estimatePromptTokens } from '../../src/llm/tokens.js';
import { truncatedAt } from '../../src/llm/types.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { deliberationJury, profileWith, readAudit, withSim } from '../deliberation/helpers.js';
import { judgeAll, juryOn, withRuntime } from '../helpers/jury.js';

const records = syntheticRecords(4, { seed: 8 });

async function judged(config: (url: string) => JuryConfigInput): Promise<{ verdicts: Verdict[]; audit: AuditEntry[] }> {
  const path = join(mkdtempSync(join(tmpdir(), 'rj-cut-')), 'audit.jsonl');
  const verdicts = await withSim(profileWith(), records, (sim) => withRuntime(config(sim.url), (rt) => judgeAll(rt, records, 4), path));
  let audit: AuditEntry[] = [];
  try {
    audit = readAudit(path);
  } catch {
    audit = []; // no line at all: nothing was sent
  }
  return { verdicts, audit };
}

/** Every reply of `phase` was cut and none was accepted; there was at least one. */
function allCut(audit: AuditEntry[], phase: Phase, budget: number): AuditEntry[] {
  const lines = audit.filter((l) => l.phase === phase);
  expect(lines.length).toBeGreaterThan(0);
  for (const l of lines) expect(l).toMatchObject({ outcome: 'error', finish_reason: 'length', error: truncatedAt(budget), sampling: { max_tokens: budget } });
  return lines;
}

describe('a cut reply is never accepted, in every kind of call', () => {
  it('consolidation: the verdict falls back to Phase 1 and says the consolidator was cut', async () => {
    const { verdicts, audit } = await judged((url) => juryOn(url, { max_tokens: { consolidation: 3 } }));
    allCut(audit, 'consolidation', 3);
    for (const v of verdicts) {
      expect(v.degraded).toBe(true);
      expect(v.degraded_reason).toContain(`consolidation failed (consolidator (sim-consolidator@sim, consolidation) failed after 1 attempt(s): ${truncatedAt(3)})`);
    }
    // the jurors' own budget is the phase1 default: not cut
    expect(audit.filter((l) => l.phase === 'phase1').every((l) => l.outcome === 'ok' && l.sampling?.max_tokens === 8192)).toBe(true);
  }, 120_000);

  it('deliberation turns: a cut turn is skipped, never put in the transcript', async () => {
    const { verdicts, audit } = await judged((url) => deliberationJury(url, { max_tokens: { juror_turn: 3 } }));
    allCut(audit, 'juror_turn', 3);
    for (const v of verdicts) {
      expect(v.transcript).toEqual([]);
      expect(v.degraded).toBe(true);
      expect(v.degraded_reason).toContain(truncatedAt(3));
    }
  }, 120_000);

  it('moderator decisions: a cut decision is a moderator failure (round-robin instead)', async () => {
    const { verdicts, audit } = await judged((url) => deliberationJury(url, { max_tokens: { moderator: 3 } }));
    allCut(audit, 'moderator', 3);
    for (const v of verdicts) {
      expect(v.degraded).toBe(true);
      expect(v.degraded_reason).toMatch(/moderator failed \d+ of \d+ decisions \(moderator \(sim-moderator@sim, moderator\) failed after 1 attempt\(s\): truncated at max_tokens \(3\)\)/);
    }
  }, 120_000);

  it('extraction: a cut extraction is no verdict of the deliberation', async () => {
    const { verdicts, audit } = await judged((url) => deliberationJury(url, { max_tokens: { extraction: 3 } }));
    allCut(audit, 'extraction', 3);
    for (const v of verdicts) {
      expect(v.degraded).toBe(true);
      expect(v.degraded_reason).toContain(truncatedAt(3));
    }
  }, 120_000);

  it('with truncation_retry_max_tokens a cut juror is asked once more with the larger budget and judges', async () => {
    const { verdicts, audit } = await judged((url) => {
      const base = juryOn(url);
      return { ...base, jurors: base.jurors!.map((j) => ({ ...j, max_tokens: 3, truncation_retry_max_tokens: 4096 })) };
    });
    for (const v of verdicts) {
      expect(v.degraded).toBe(false);
      expect(v.phase1_judgements.every((j) => j.ok)).toBe(true);
    }
    const phase1 = audit.filter((l) => l.phase === 'phase1');
    expect(phase1).toHaveLength(records.length * 3 * 2);
    const jurors = [...new Set(verdicts.flatMap((v) => v.phase1_judgements.map((j) => j.juror_id)))];
    expect(jurors).toHaveLength(3);
    for (const juror of jurors) {
      for (const r of records) {
        const lines = phase1.filter((l) => l.participant === juror && l.record_id === r.id);
        expect(lines.map((l) => [l.turn, l.outcome, l.finish_reason, l.sampling?.max_tokens])).toEqual([
          ['initial', 'truncated', 'length', 3],
          ['larger_budget', 'ok', 'stop', 4096],
        ]);
      }
    }
  }, 120_000);
});

describe('a prompt too large for the context window', () => {
  it('fails every juror before sending: the record gets no verdict, with the sizes, and nothing crashes', async () => {
    const { verdicts, audit } = await judged((url) => juryOn(url, {}, { context_window: 2000 }));
    expect(audit).toEqual([]); // nothing was sent
    for (const v of verdicts) {
      expect(v.error).toMatch(/jurors succeeded/);
      for (const j of v.phase1_judgements) {
        expect(j.ok).toBe(false);
        expect(j.error).toMatch(new RegExp(`^${j.juror_id} \\(sim-juror-.@sim, phase1\\): prompt does not fit the context window: ~\\d+ prompt tokens \\(estimate, 4 chars/token\\) \\+ max_tokens 8192 = \\d+ > 2000 tokens \\(endpoints\\.sim\\.context_window\\); not sent$`));
      }
    }
    expect(estimatePromptTokens([{ role: 'user', content: 'x'.repeat(4000) }])).toBe(1004);
  }, 120_000);
});
