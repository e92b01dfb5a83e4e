import { describe, expect, it } from 'vitest';
import { parseProfile, phase1Task, isInventedQuote, modelProfile } from '../../src/sim/index.js';
import { createRng } from '../../src/util/prng.js';

/** Phase 1 findings of one simulated juror over many traces, straight from the task. */
function findings(inventRate: number | undefined, traces = 400) {
  const profile = parseProfile({ seed: 3, models: { default: { recall: 0.7, false_positive_rate: 0.1, adjacent_rate: 0, ...(inventRate === undefined ? {} : { invent_rate: inventRate }) } } });
  const model = modelProfile(profile, 'any')!;
  const steps = Array.from({ length: 8 }, (_, i) => `Step ${i + 1} computes ${i * 7} plus ${i + 3} and carries the total forward.`);
  const out: Array<{ refs: string[]; evidence: string; errors: number[] }> = [];
  for (let t = 0; t < traces; t++) {
    const errors = [1 + (t % 8)];
    const r = phase1Task.run({ request: { messages: [] } as never, modelName: 'any', model, blocks: new Map(), steps, gold: { id: `t${t}`, n_steps: 8, error_steps: errors }, rng: createRng(['invent', t]) });
    if (r.kind !== 'json') throw new Error('json expected');
    for (const d of r.value.negatives as Array<{ statement_refs: string[]; evidence: string }>) out.push({ refs: d.statement_refs, evidence: d.evidence, errors });
  }
  return { out, steps };
}

describe('simulator invent_rate', () => {
  it('invented findings are about that share of the juror\'s findings, cite clean steps and quote text no step holds', () => {
    const { out, steps } = findings(0.2);
    const invented = out.filter((f) => isInventedQuote(f.evidence.replace(/^\[STEP-\d+\] '|'$/g, '')));
    const share = invented.length / out.length;
    expect(share).toBeGreaterThan(0.15);
    expect(share).toBeLessThan(0.25);
    for (const f of invented) {
      const step = Number(/STEP-(\d+)/.exec(f.refs[0]!)![1]);
      expect(f.errors).not.toContain(step);
      const quote = /'(.*)'/.exec(f.evidence)![1]!;
      expect(steps.some((s) => s.includes(quote))).toBe(false);
    }
    // genuine quotes are the step's own words
    for (const f of out.filter((x) => !invented.includes(x)).slice(0, 50)) expect(steps.some((s) => s.includes(/'(.*)'/.exec(f.evidence)![1]!))).toBe(true);
  });
  // That profiles without the knob keep their streams is checked by test/golden/golden.test.ts (shard bytes).
  it('invent_rate 0 or absent: no invented findings', () => {
    for (const rate of [0, undefined]) expect(findings(rate).out.some((f) => isInventedQuote(/'(.*)'/.exec(f.evidence)![1]!))).toBe(false);
    expect(findings(0.5).out.some((f) => isInventedQuote(/'(.*)'/.exec(f.evidence)![1]!))).toBe(true);
  });
});
