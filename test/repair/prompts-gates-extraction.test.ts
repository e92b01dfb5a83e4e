/**
 * Defect-guided repair, the pure parts: the retry prompt per condition (App. N.2), the gates,
 * answer extraction (App. N.1: marker first, a fallback that never reads a truncated tail) and
 * the comparison with the reference answer; plus the prompt-hash opt-in.
 */
import { describe, expect, it } from 'vitest';
import { FilterRule, JuryConfig, RepairConfig } from '../../schemas/config.js';
import type { Defect } from '../../schemas/defect.js';
import type { DecisionFacts } from '../../src/derive/decision.js';
import { answersMatch, extractAnswer, repairGate } from '../../src/derive/repair.js';
import { REPAIR_BLOCK, repairMessages, repairPromptHash } from '../../src/prompts/repair.js';
import { loadPromptSet, REPAIR_TEMPLATES } from '../../src/prompts/templates.js';
import { unframeBlock } from '../../src/prompts/frame.js';

const set = loadPromptSet(undefined, new Set(REPAIR_TEMPLATES));
const d = (refs: number[], impact: Defect['impact'], what: string): Defect => ({ statement_refs: refs, impact, what_went_wrong: what, evidence: 'quote' });
const defects = [d([4, 2], 'major', 'The sum in step 4 drops a term.'), d([2], 'fatal', 'Divides by zero when x = 1.'), d([9], 'neutral', 'Wording could be clearer.'), d([7], 'minor', 'Rounds too early.')];
const input = { problem: 'Find x. Ignore [STEP-3] here.', steps: [1, 2, 3, 4, 5, 6, 7, 8, 9].map((i) => ({ index: i, text: `step ${i} text` })) };
const integer = RepairConfig.shape.answer.parse({});

describe('retry prompt (App. N.2)', () => {
  const user = (cond: 'steps' | 'full', answer = integer) => repairMessages(set, input, defects, cond, answer)[1]!.content;

  it('steps: only the deduplicated, ascending cited steps of non-neutral findings', () => {
    const block = unframeBlock(user('steps'), REPAIR_BLOCK.steps);
    expect(block).toBe('- [STEP-2]\n- [STEP-4]\n- [STEP-7]');
    expect(user('steps')).not.toContain('Divides by zero');
    expect(user('steps')).not.toMatch(/FATAL|MAJOR|MINOR/);
    expect(unframeBlock(user('steps'), REPAIR_BLOCK.full)).toBeNull();
  });

  it('full: each non-neutral finding with its steps, severity and what went wrong; neutral ones never', () => {
    const block = unframeBlock(user('full'), REPAIR_BLOCK.full)!;
    expect(block.split('\n- ')).toHaveLength(3);
    expect(block).toContain('[STEP-4] [STEP-2] -- MAJOR\n  The sum in step 4 drops a term.');
    expect(block).toContain('[STEP-2] -- FATAL\n  Divides by zero when x = 1.');
    expect(block).toContain('[STEP-7] -- MINOR');
    expect(block).not.toContain('Wording could be clearer');
    expect(block).not.toContain('[STEP-9]');
  });

  it('has the problem, the [STEP-k] trace, the from-scratch and distrust instructions and the answer contract', () => {
    for (const cond of ['steps', 'full'] as const) {
      const u = user(cond);
      expect(unframeBlock(u, 'PROBLEM')).toBe('Find x. Ignore [step-3] here.');
      expect(unframeBlock(u, 'REASONING TRACE')).toContain('[STEP-1] step 1 text\n\n[STEP-2] step 2 text');
      expect(u).toMatch(/from the beginning/);
      expect(u).toMatch(/flagged parts .* suspect/);
      expect(u).toMatch(/parts the review did not flag as correct either/);
      expect(u.trimEnd().endsWith('ANSWER: <integer>')).toBe(true);
    }
    expect(user('full', RepairConfig.shape.answer.parse({ kind: 'choice', choices: ['A', 'B', 'C'] })).trimEnd().endsWith('ANSWER: <one of A, B, C>')).toBe(true);
    expect(user('full', RepairConfig.shape.answer.parse({ kind: 'text' }))).toContain('ANSWER: <your final answer, on this one line>');
  });

  it('the two conditions differ only in the findings block and its intro', () => {
    const strip = (s: string) => s.replace(/<<<BEGIN (FLAGGED STEPS|REVIEW FINDINGS)[\s\S]*?<<<END \1 [0-9a-f]+>>>/, '').replace(set.templates['repair.steps'].trim(), '').replace(set.templates['repair.full'].trim(), '');
    expect(strip(user('steps'))).toBe(strip(user('full')));
  });

  it('prompt hash differs per condition and per answer contract', () => {
    const a = repairPromptHash(set, 'steps', integer);
    expect(a).not.toBe(repairPromptHash(set, 'full', integer));
    expect(a).not.toBe(repairPromptHash(set, 'steps', RepairConfig.shape.answer.parse({ kind: 'text' })));
    expect(a).toBe(repairPromptHash(loadPromptSet(), 'steps', integer));
  });

  it('repair templates enter the verdict prompt_hash only when repair is on', () => {
    expect(loadPromptSet().hash).toBe(loadPromptSet(undefined, new Set()).hash);
    expect(loadPromptSet(undefined, new Set(REPAIR_TEMPLATES)).hash).not.toBe(loadPromptSet().hash);
  });
});

const facts = (impacts: Defect['impact'][], extra: Partial<DecisionFacts> = {}): DecisionFacts => ({
  record_id: 'r',
  error: false,
  degraded: false,
  degraded_reason: null,
  confidence: 1,
  n_dissent: 0,
  defects: impacts.map((impact, i) => ({ impact, statement_refs: [i + 1], vote_count: 2, category_id: null, leaf_id: null })),
  steps: [{ max_impact: null, label: false }],
  ...extra,
});

describe('gates', () => {
  const gate = (g: object) => RepairConfig.parse({ generator: { id: 'g', endpoint: 'e', model: 'm' }, ...g });
  it('any_defect: some defect above neutral', () => {
    expect(repairGate(gate({}), facts(['minor']))).toBe('any_defect');
    expect(repairGate(gate({}), facts(['neutral', 'neutral']))).toBeNull();
    expect(repairGate(gate({}), facts([]))).toBeNull();
    expect(repairGate(gate({}), facts(['fatal'], { error: true }))).toBeNull();
  });
  it('fatal: only a fatal defect', () => {
    expect(repairGate(gate({ gate: 'fatal' }), facts(['major', 'minor']))).toBeNull();
    expect(repairGate(gate({ gate: 'fatal' }), facts(['minor', 'fatal']))).toBe('fatal');
  });
  it('rules: the first matching rule decides; drop and review retry, keep exempts; its name is the gate', () => {
    const rules = [
      { name: 'split', all: [{ min_impact: 'major' }, { votes_below: 3 }], decision: 'keep' },
      { name: 'majors', min_impact: 'major', decision: 'review' },
      { dissent_at_least: 2, decision: 'drop' },
    ];
    const g = gate({ gate: 'rules', rules });
    expect(repairGate(g, facts(['major']))).toBeNull(); // vote_count 2 < 3: "split" keeps it
    expect(repairGate(g, facts(['major'], { defects: [{ impact: 'major', statement_refs: [1], vote_count: 3, category_id: null, leaf_id: null }] }))).toBe('majors');
    expect(repairGate(g, facts(['minor'], { n_dissent: 2 }))).toBe('rule 3');
    expect(repairGate(g, facts(['minor']))).toBeNull();
    expect(() => RepairConfig.parse({ generator: { id: 'g', endpoint: 'e', model: 'm' }, gate: 'rules' })).toThrow(/rules/);
    expect(FilterRule.safeParse(rules[0]).success).toBe(true);
  });
  it('config: repair is absent by default and its generator must name a known endpoint', () => {
    const base = { endpoints: { e: { kind: 'simulator' } }, jurors: [{ id: 'j', endpoint: 'e', model: 'm' }], mode: 'single' };
    expect(JuryConfig.parse(base).repair).toBeUndefined();
    const r = JuryConfig.safeParse({ ...base, repair: { generator: { id: 'g', endpoint: 'nope', model: 'm' } } });
    expect(r.success).toBe(false);
    expect(JSON.stringify(r.error?.issues)).toContain('repair');
  });
});

describe('answer extraction (App. N.1)', () => {
  it('the explicit marker first, the last one', () => {
    expect(extractAnswer('so 12\nANSWER: 41\nwait\nANSWER: 42', 'stop')).toEqual({ answer: '42', source: 'marker' });
    expect(extractAnswer('**ANSWER:** 7', 'stop')).toEqual({ answer: '7', source: 'marker' });
    expect(extractAnswer('\\boxed{5}\nANSWER: 6', 'stop')).toEqual({ answer: '6', source: 'marker' });
  });
  it('fallback: the last \\boxed{}, then the last number of the final line', () => {
    expect(extractAnswer('first \\boxed{1} then \\boxed{\\frac{1}{2}}\nso done', 'stop')).toEqual({ answer: '\\frac{1}{2}', source: 'fallback' });
    expect(extractAnswer('we get 17 apples\nthe total is 1,024', 'stop')).toEqual({ answer: '1024', source: 'fallback' });
    expect(extractAnswer('no number here\nnone at all', 'stop')).toEqual({ answer: null, source: 'none' });
  });
  it('a truncated text: no fallback, and a marker only on a line that ended before the cut', () => {
    expect(extractAnswer('computing 3 + 4 = 7 and then 12', 'length')).toEqual({ answer: null, source: 'none' });
    expect(extractAnswer('\\boxed{9} and more', 'length')).toEqual({ answer: null, source: 'none' });
    expect(extractAnswer('ANSWER: 12', 'length')).toEqual({ answer: null, source: 'none' }); // may be cut mid-number
    expect(extractAnswer('ANSWER: 12\nlet me double-check 13', 'length')).toEqual({ answer: '12', source: 'marker' });
  });
  it('comparison normalises per contract; no reference gives null', () => {
    expect(answersMatch('042', '42', 'integer')).toBe(true);
    expect(answersMatch('$1,024.', '1024', 'integer')).toBe(true);
    expect(answersMatch('\\boxed{7}', '7', 'integer')).toBe(true);
    expect(answersMatch('43', '42', 'integer')).toBe(false);
    expect(answersMatch(null, '42', 'integer')).toBe(false);
    expect(answersMatch('42', null, 'integer')).toBeNull();
    expect(answersMatch('  Paris. ', 'paris', 'text')).toBe(true);
    expect(answersMatch('(b)', 'B', 'choice')).toBe(true);
    expect(answersMatch('C', 'B', 'choice')).toBe(false);
  });
});
