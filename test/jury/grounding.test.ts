import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { Defect } from '../../schemas/defect.js';
import type { CallUsage } from '../../schemas/usage.js';
import type { Judgement } from '../../schemas/verdict.js';
import { defaultConfigInput, parseConfig } from '../../src/config/load.js';
import { detailRow } from '../../src/derive/detail.js';
import { approximateEdits, backers, checkVoters, groundConsensus, groundDefect, matchQuote, normalise, quotesOf, stepTokens, tokens } from '../../src/jury/grounding/index.js';
import { judgeRecord, type JuryContext } from '../../src/jury/judge.js';
import { type CallResult, type ModelGateway, type StructuredCall } from '../../src/llm/types.js';
import { loadPromptSet } from '../../src/prompts/templates.js';
import { segmentRecord } from '../../src/segment/index.js';

const opts = { maxEditRatio: 0.2, minFuzzyTokens: 4 };
const found = (step: string, quote: string) => matchQuote(tokens(step), tokens(quote), opts);

describe('normalisation', () => {
  it('folds whitespace, case and curly quotes', () => {
    expect(normalise('  The   Sum\n\tIS  “five” ')).toBe('the sum is "five"');
  });
  it('folds LaTeX: $, \\frac, \\cdot, \\text, braces, \\( \\)', () => {
    expect(tokens('$\\frac{3}{4} \\cdot x = \\text{12 km}$')).toEqual(tokens('3/4 * x = 12 km'));
    expect(tokens('\\(\\dfrac{a+1}{2}\\)')).toEqual(tokens('(a+1)/2'));
    expect(tokens('x \\leq 5 \\times 2')).toEqual(tokens('x ≤ 5 × 2'));
    expect(tokens('\\pi r^{2}')).toEqual(tokens('pi r^2'));
  });
  it('folds number formatting: thousands separators and trailing decimal zeros', () => {
    expect(tokens('1,000')).toEqual(tokens('1000'));
    expect(tokens('1000.0')).toEqual(tokens('1000'));
    expect(tokens('2.50 and 1,234,567.00')).toEqual(tokens('2.5 and 1234567'));
    // a list of numbers is not a thousands group, and real decimals stay
    expect(tokens('1, 2, 3')).toEqual(['1', '2', '3']);
    expect(tokens('3.14')).toEqual(['3.14']);
    expect(tokens('0.05')).toEqual(['0.05']);
  });
});

describe('quote matching', () => {
  const step = 'So the total cost is $1,000.00, which means each of the 4 friends pays \\frac{1000}{4} = 250 dollars.';
  it('finds an exact quote through formatting differences', () => {
    expect(found(step, 'total cost is 1000')).toEqual({ kind: 'exact', edits: 0 });
    expect(found(step, 'pays 1000/4 = 250 dollars')).toEqual({ kind: 'exact', edits: 0 });
    expect(found(step, 'each  of the\n4 friends')).toEqual({ kind: 'exact', edits: 0 });
  });
  it('accepts up to floor(ratio x tokens) token edits, not one more', () => {
    // 10 tokens: 2 edits allowed
    expect(found(step, 'the total cost was 1000 which means each of the')?.kind).toBe('fuzzy');
    expect(found(step, 'the whole cost was 1000 which means each of the')).toEqual({ kind: 'fuzzy', edits: 2 });
    expect(found(step, 'the whole cost was 1000 which implies each of the')).toBeNull();
  });
  it('a short quote must match exactly', () => {
    expect(found(step, 'pays 250')).toBeNull();
    expect(found(step, '= 250 dollars')).toEqual({ kind: 'exact', edits: 0 });
    expect(found(step, 'total price is')).toBeNull();
  });
  it('approximate substring distance is over a run anywhere in the step', () => {
    expect(approximateEdits(['a', 'b', 'c', 'd', 'e'], ['b', 'x', 'd'])).toBe(1);
    expect(approximateEdits(['a', 'b'], ['a', 'b'])).toBe(0);
    expect(approximateEdits([], ['a', 'b'])).toBe(2);
  });
  it('an empty quote matches nothing', () => {
    expect(found(step, '  ')).toBeNull();
  });
});

describe('quotes of the evidence', () => {
  it('splits quoted spans and keeps the step named before each', () => {
    expect(quotesOf("[STEP-3] 'x = 5'; [STEP-4] 'so y = 10'")).toEqual([
      { text: 'x = 5', step: 3 },
      { text: 'so y = 10', step: 4 },
    ]);
    expect(quotesOf('The step says "a + b = 7" and then “c = 2”')).toEqual([
      { text: 'a + b = 7', step: null },
      { text: 'c = 2', step: null },
    ]);
  });
  it('apostrophes inside words neither open nor close a quote', () => {
    expect(quotesOf("[STEP-2] 'Let's add the two numbers'")).toEqual([{ text: "Let's add the two numbers", step: 2 }]);
  });
  it('a piece wrapped in quotes is one quote, with primes, apostrophes and newlines inside', () => {
    expect(quotesOf("[STEP-4] 'we get:\n\\[ m' = \\frac{a}{2} \\]'; [STEP-4] 'it's = 4'")).toEqual([
      { text: "we get:\n\\[ m' = \\frac{a}{2} \\]", step: 4 },
      { text: "it's = 4", step: 4 },
    ]);
  });
  it('unquoted evidence is one quote without its step markers; empty evidence has none', () => {
    expect(quotesOf('[STEP-2]: the sum is 12')).toEqual([{ text: 'the sum is 12', step: 2 }]);
    expect(quotesOf('')).toEqual([]);
  });
});

const steps = ['We start with 12 apples in the basket.', 'Then we add 1,000 more apples, giving 1012 apples.', 'Half of them is \\frac{1012}{2} = 506.', 'The answer is 506.'];
const defect = (refs: number[], evidence: string, extra: Partial<Defect> = {}): Defect => ({ statement_refs: refs, what_went_wrong: 'the count is wrong', impact: 'major', evidence, ...extra });

describe('grounding one defect', () => {
  const st = stepTokens(steps);
  it('grounded: the quote sits in a cited step', () => {
    expect(groundDefect(defect([2], "[STEP-2] 'add 1000 more apples, giving 1012'"), st, opts)).toMatchObject({ status: 'grounded', refs: null, match: 'exact', quotes: 1 });
  });
  it('relocated: the quote sits in another step; refs become that step', () => {
    expect(groundDefect(defect([2], "[STEP-3] 'Half of them is 1012/2 = 506'"), st, opts)).toMatchObject({ status: 'relocated', refs: [3] });
    // one quote in a cited step, one elsewhere: both steps
    expect(groundDefect(defect([1, 2], "[STEP-1] 'start with 12 apples'; [STEP-2] 'half of them is 1012 / 2'"), st, opts)).toMatchObject({ status: 'relocated', refs: [1, 3] });
  });
  it('ungrounded: no quote anywhere, or no evidence at all', () => {
    expect(groundDefect(defect([2], "[STEP-2] 'we multiply 77 oranges by the tax'"), st, opts)).toMatchObject({ status: 'ungrounded', match: 'none' });
    expect(groundDefect(defect([2], ''), st, opts)).toMatchObject({ status: 'ungrounded', quotes: 0 });
  });
});

const judgement = (id: string, defects: Defect[], ok = true): Judgement => ({ juror_id: id, model: 'm', ok, defects, dropped_refs: 0 });

describe('voters against Phase 1', () => {
  const j = [
    judgement('a', [defect([2], "[STEP-2] 'giving 1012 apples'", { what_went_wrong: 'adds the numbers wrong' })]),
    judgement('b', [defect([3], "[STEP-3] 'Half of them'", { what_went_wrong: 'halving is fine here but the division is misread' })]),
    judgement('c', [defect([2], "[STEP-2] 'Then we add'", { what_went_wrong: 'ignores the original basket entirely when summing' })]),
    judgement('d', [defect([2], "[STEP-2] 'giving 1012 apples'")], false),
  ];
  it('a juror backs a defect with a finding on a shared step and a compatible description', () => {
    const d = defect([2], "[STEP-2] 'giving 1012 apples'; [STEP-2] 'Then we add'", { what_went_wrong: 'sums the apples wrong', voters: ['a', 'b'], vote_count: 2 });
    // a: quote in the evidence; c: quote in the evidence; b: another step; d: failed
    expect(backers(d, j)).toEqual(['a', 'c']);
  });
  it('with the trace given, a finding whose own quote is not in it backs nothing', () => {
    const invented = judgement('e', [defect([2], "[STEP-2] 'we add 4242 pears to the basket'", { what_went_wrong: 'adds the numbers wrong' })]);
    const d = defect([2], "[STEP-2] 'giving 1012 apples'; [STEP-2] 'we add 4242 pears to the basket'", { what_went_wrong: 'adds the numbers wrong' });
    expect(backers(d, [...j, invented])).toEqual(['a', 'e']);
    expect(backers(d, [...j, invented], { steps: stepTokens(steps), opts })).toEqual(['a']);
  });
  it('a same-step finding with an unrelated description does not count', () => {
    const d = defect([2], "[STEP-2] 'giving 1012 apples'", { what_went_wrong: 'adds the numbers wrong and carries it' });
    expect(backers(d, j)).toEqual(['a']);
  });
  it('corrects voters and vote_count and records the correction; correct ones are left alone', () => {
    const wrong = defect([2], "[STEP-2] 'giving 1012 apples'", { what_went_wrong: 'adds the numbers wrong', voters: ['a', 'b'], vote_count: 3 });
    const right = defect([3], "[STEP-3] 'Half of them'", { what_went_wrong: 'halving misread', voters: ['b'], vote_count: 1 });
    const none = defect([4], "[STEP-4] 'The answer is 506'");
    const r = checkVoters([wrong, right, none], [0, 4, 5], j);
    expect(r.defects[0]).toMatchObject({ voters: ['a'], vote_count: 1 });
    expect(r.defects[1]).toBe(right);
    expect(r.defects[2]).toBe(none);
    expect(r.corrections).toEqual([{ defect_index: 0, voters_before: 'a,b', voters_after: 'a', vote_count_before: 3, vote_count_after: 1 }]);
  });
  it('the same voters in another order are no correction; a missing backer is added after the listed ones', () => {
    const d = defect([2], "[STEP-2] 'giving 1012 apples'; [STEP-2] 'Then we add'", { what_went_wrong: 'sums the apples wrong', voters: ['c', 'a'], vote_count: 2 });
    expect(checkVoters([d], [0], j).corrections).toEqual([]);
    const missing = { ...d, voters: ['c'], vote_count: 1 };
    expect(checkVoters([missing], [0], j).defects[0]).toMatchObject({ voters: ['c', 'a'], vote_count: 2 });
  });
});

describe('policies', () => {
  const consensus = [
    defect([2], "[STEP-2] 'giving 1012 apples'", { voters: ['a'], vote_count: 1, what_went_wrong: 'adds the numbers wrong' }),
    defect([1], "[STEP-1] 'Half of them is 1012/2'", { voters: ['a'], vote_count: 1, what_went_wrong: 'adds the numbers wrong' }),
    defect([4], "[STEP-4] 'the answer is 77 oranges in total'", { voters: ['a'], vote_count: 1 }),
  ];
  const j = [judgement('a', [defect([2], "[STEP-2] 'giving 1012 apples'", { what_went_wrong: 'adds the numbers wrong' })])];
  const g = (policy: 'keep' | 'flag' | 'drop') => groundConsensus({ policy, max_edit_ratio: 0.2, min_fuzzy_tokens: 4, check_voters: true }, consensus, steps, j);
  it('keep: the ungrounded defect stays, nothing flagged', () => {
    const r = g('keep');
    expect(r.defects.map((d) => d.statement_refs)).toEqual([[2], [3], [4]]);
    expect(r.outcome.checks.map((c) => [c.status, c.outcome, c.corrected_refs])).toEqual([
      ['grounded', 'kept', null],
      ['relocated', 'kept', '3'],
      ['ungrounded', 'kept', null],
    ]);
    expect(r.flag).toBeNull();
  });
  it('flag: it stays and the verdict is to be marked', () => {
    const r = g('flag');
    expect(r.defects).toHaveLength(3);
    expect(r.outcome.checks[2]!.outcome).toBe('flagged');
    expect(r.flag).toMatch(/1 of 3 defects/);
  });
  it('drop: it leaves; voters of the relocated defect are checked at its corrected step', () => {
    const r = g('drop');
    expect(r.defects.map((d) => d.statement_refs)).toEqual([[2], [3]]);
    expect(r.outcome.checks[2]!.outcome).toBe('dropped');
    // juror a cited step 2, not 3: the relocated defect loses its voter
    expect(r.outcome.voter_corrections).toEqual([{ defect_index: 1, voters_before: 'a', voters_after: '', vote_count_before: 1, vote_count_after: 0 }]);
  });
});

/** Scripted gateway: Phase 1 and consolidation replies are the test's. */
class Scripted implements ModelGateway {
  constructor(private readonly reply: (call: StructuredCall<unknown>) => unknown) {}
  async structured<T>(call: StructuredCall<T>): Promise<CallResult<T>> {
    const usage: CallUsage = { phase: call.ctx.phase, participant: call.ctx.participant, model: call.seat.model, endpoint: 's', tokens_in: 1, tokens_out: 1, cost_usd: 0, latency_ms: 1, attempts: 1, outcome: 'ok' };
    const out = this.reply(call as StructuredCall<unknown>);
    return { value: (call.schema as z.ZodType<T>).parse(out), raw: JSON.stringify(out), usage, cached: false };
  }
  async text(): Promise<CallResult<string>> {
    throw new Error('not used');
  }
}

describe('grounding in judgeRecord', () => {
  const input = { id: 'r1', problem: 'p', steps: segmentRecord({ trace: steps.join('\n\n') }) };
  const neg = (step: number, evidence: string, extra: Record<string, unknown> = {}) => ({ statement_refs: [`STEP-${step}`], what_went_wrong: 'adds the numbers wrong', impact: 'major', evidence, ...extra });
  const gateway = new Scripted((c) =>
    c.ctx.phase === 'phase1'
      ? { negatives: c.ctx.participant === 'jury-2' ? [neg(4, "[STEP-4] 'we invented 4242 oranges'")] : [neg(2, "[STEP-2] 'giving 1012 apples'")] }
      : { negatives: [neg(2, "[STEP-2] 'giving 1012 apples'", { vote_count: 3, voters: ['jury-0', 'jury-1', 'jury-2'] }), neg(4, "[STEP-4] 'we invented 4242 oranges'", { vote_count: 1, voters: ['jury-2'] })] },
  );
  const prompts = loadPromptSet();
  const ctx = (over: Record<string, unknown>): JuryContext => ({ config: parseConfig({ ...defaultConfigInput(), ...over }), gateway, prompts, configHash: 'c' });

  it('without grounding (absent or policy off) the verdict has no grounding and keeps every defect', async () => {
    for (const over of [{}, { grounding: { policy: 'off' } }]) {
      const v = await judgeRecord(ctx(over), input);
      expect(v.grounding).toBeUndefined();
      expect(v.defects).toHaveLength(2);
      expect(detailRow(v).grounding).toBeNull();
    }
  });
  it('drop: the invented defect leaves, the voter list is corrected, all recorded in the verdict and its detail row', async () => {
    const v = await judgeRecord(ctx({ grounding: { policy: 'drop' } }), input);
    expect(v.defects.map((d) => [d.statement_refs, d.voters, d.vote_count])).toEqual([[[2], ['jury-0', 'jury-1'], 2]]);
    expect(v.degraded).toBe(false);
    const row = detailRow(v);
    expect(row.grounding!.map((c) => c.outcome)).toEqual(['kept', 'dropped']);
    expect(row.voter_corrections).toEqual([{ defect_index: 0, voters_before: 'jury-0,jury-1,jury-2', voters_after: 'jury-0,jury-1', vote_count_before: 3, vote_count_after: 2 }]);
  });
  it('flag: the defect stays and the verdict is degraded with the reason', async () => {
    const v = await judgeRecord(ctx({ grounding: { policy: 'flag' } }), input);
    expect(v.defects).toHaveLength(2);
    expect(v.degraded).toBe(true);
    expect(v.degraded_reason).toMatch(/grounding: 1 of 2 defects/);
  });
  it('grounding without the model checker adds no template to the prompt hash', async () => {
    const a = await judgeRecord(ctx({}), input);
    const b = await judgeRecord(ctx({ grounding: { policy: 'drop' } }), input);
    expect(b.prompt_hash).toBe(a.prompt_hash);
  });
});
