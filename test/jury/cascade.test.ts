/**
 * Cascade Phase 1 (issue 16.1): each rule escalates when, and only when, its condition holds;
 * the verdict says which seats ran and why; only those seats are called; Phase 2 (union,
 * majority, consolidation) works on what they gathered; external seats take part as seats; the
 * default config is untouched (no `cascade` on the verdict, the same config_hash).
 */
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { CascadeRule, JuryConfigInput } from '../../schemas/config.js';
import type { CallUsage } from '../../schemas/usage.js';
import { configHash, defaultConfigInput, parseConfig } from '../../src/config/load.js';
import { judgeRecord, type JudgeInput, type JuryContext } from '../../src/jury/judge.js';
import { type CallResult, type ModelGateway, ModelCallError, type StructuredCall, type TextCall } from '../../src/llm/types.js';
import { loadPromptSet } from '../../src/prompts/templates.js';
import { segmentRecord } from '../../src/segment/index.js';
import { openRuntime } from '../../src/compose/runtime.js';
import { prepareRecord } from '../../src/pipeline/steps/segment.js';
import { buildGoldIndex, createSimProvider, defaultProfile, withoutFaults } from '../../src/sim/index.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { deriveRows } from '../../src/derive/rows.js';

type Neg = { statement_refs: string[]; what_went_wrong: string; impact: string; evidence: string };
const neg = (refs: number[], impact = 'major'): Neg => ({ statement_refs: refs.map((r) => `STEP-${r}`), what_went_wrong: `wrong at ${refs.join(',')}`, impact, evidence: 'e' });

/** Phase 1 answers by juror id from `answers` (an Error: the call fails); consolidation adopts every candidate. */
class ScriptedGateway implements ModelGateway {
  calls: StructuredCall<unknown>[] = [];
  constructor(private readonly answers: Record<string, Neg[] | Error>) {}
  async structured<T>(call: StructuredCall<T>): Promise<CallResult<T>> {
    this.calls.push(call as StructuredCall<unknown>);
    const usage: CallUsage = { phase: call.ctx.phase, participant: call.ctx.participant, model: call.seat.model, endpoint: 'scripted', tokens_in: 100, tokens_out: 20, cost_usd: 0.001, latency_ms: 5, attempts: 1, outcome: 'ok' };
    let out: unknown;
    if (call.ctx.phase === 'consolidation') {
      const user = call.messages.map((m) => m.content).join('\n');
      const panel = user.slice(user.indexOf('<<<BEGIN PANEL FINDINGS'));
      // Adopt every step any panel member cited, as one defect per step.
      const cited = [...new Set([...panel.matchAll(/"STEP-(\d+)"/g)].map((m) => Number(m[1])))].sort((a, b) => a - b);
      out = { negatives: cited.map((s) => neg([s])) };
    } else {
      const a = this.answers[call.ctx.participant] ?? [];
      if (a instanceof Error) throw new ModelCallError(a.message, { ...usage, outcome: 'error' });
      out = { negatives: a };
    }
    return { value: (call.schema as z.ZodType<T>).parse(out), raw: JSON.stringify(out), usage, cached: false };
  }
  async text(_call: TextCall): Promise<CallResult<string>> {
    throw new Error('not used');
  }
  called(phase = 'phase1'): string[] {
    return this.calls.filter((c) => c.ctx.phase === phase).map((c) => c.ctx.participant);
  }
}

const prompts = loadPromptSet();
const input: JudgeInput = { id: 'r1', problem: 'p', steps: segmentRecord({ trace: 'One.\n\nTwo.\n\nThree.\n\nFour.\n\nFive.' }) };
const jurors = ['a', 'b', 'c', 'd'].map((id) => ({ id, endpoint: 'sim', model: `sim-juror-${id}` }));

function configOf(cascade: Record<string, unknown>, over: Partial<JuryConfigInput> = {}): JuryConfigInput {
  return { ...defaultConfigInput(), jurors, mode: 'union', phase1: { strategy: 'cascade', cascade }, ...over };
}

async function judge(config: JuryConfigInput, answers: Record<string, Neg[] | Error>) {
  const gateway = new ScriptedGateway(answers);
  const ctx: JuryContext = { config: parseConfig(config), gateway, prompts, configHash: 'cfg' };
  return { verdict: await judgeRecord(ctx, input), gateway };
}

/** Per rule: answers of a and b under which it fires, and under which it does not. */
const CASES: Record<CascadeRule, { fires: Record<string, Neg[] | Error>; quiet: Record<string, Neg[] | Error>; extra?: Record<string, unknown> }> = {
  disagree_step: { fires: { a: [neg([2])], b: [neg([3])] }, quiet: { a: [neg([2])], b: [neg([2], 'minor')] } },
  disagree_severity: { fires: { a: [neg([2], 'major')], b: [neg([2], 'minor')] }, quiet: { a: [neg([2])], b: [neg([2]), neg([4])] } },
  fatal: { fires: { a: [neg([2], 'fatal')], b: [neg([2], 'fatal')] }, quiet: { a: [neg([2])], b: [neg([3])] } },
  contested: { fires: { a: [neg([2]), neg([4])], b: [neg([2])] }, quiet: { a: [neg([2], 'minor')], b: [neg([2], 'major')] } },
  low_confidence: { fires: { a: [neg([2])], b: [] }, quiet: { a: [neg([2])], b: [neg([2])] }, extra: { low_confidence_below: 0.6 } },
  empty: { fires: { a: [], b: [] }, quiet: { a: [neg([2])], b: [] } },
  any_finding: { fires: { a: [], b: [neg([5], 'minor')] }, quiet: { a: [], b: [] } },
  failed: { fires: { a: new Error('400 bad request'), b: [] }, quiet: { a: [neg([1])], b: [neg([3])] } },
};

describe('cascade rules', () => {
  for (const [rule, c] of Object.entries(CASES) as Array<[CascadeRule, (typeof CASES)[CascadeRule]]>) {
    it(`${rule}: escalates when it fires, with the reason on the verdict; not otherwise`, async () => {
      const cascade = { start: 2, add: 'one', rules: [rule], ...(c.extra ?? {}) };
      const fired = await judge(configOf(cascade), c.fires);
      expect(fired.gateway.called()).toEqual(['a', 'b', 'c', ...(fired.verdict.cascade!.seats.includes('d') ? ['d'] : [])]);
      expect(fired.verdict.cascade!.escalations[0]).toBe(`after 2 seats: ${rule} -> c`);
      expect(fired.verdict.cascade!.seats.slice(0, 3)).toEqual(['a', 'b', 'c']);
      const quiet = await judge(configOf(cascade), c.quiet);
      expect(quiet.gateway.called()).toEqual(['a', 'b']);
      expect(quiet.verdict.cascade).toEqual({ seats: ['a', 'b'], escalations: [] });
      expect(quiet.verdict.jurors_total).toBe(2);
    });
  }

  it('the verdicts table row carries phase1_seats and escalations; null without a cascade', async () => {
    const cfg = parseConfig(configOf({ start: 2, add: 'all', rules: ['disagree_step'] }));
    const { verdict } = await judge(configOf({ start: 2, add: 'all', rules: ['disagree_step'] }), { a: [neg([2])], b: [] });
    const row = deriveRows(verdict, { source: 'file', unit: 'a.jsonl', offset: 0 }, {}, cfg).verdict;
    expect([row.phase1_seats, row.escalations]).toEqual([4, ['after 2 seats: disagree_step -> c, d']]);
    const plain = await judge({ ...configOf({}), phase1: undefined } as JuryConfigInput, {});
    const row0 = deriveRows(plain.verdict, { source: 'file', unit: 'a.jsonl', offset: 0 }, {}, cfg).verdict;
    expect([row0.phase1_seats, row0.escalations]).toEqual([null, null]);
  });

  it('add: one asks the rules again after each seat; add: all seats the rest at once', async () => {
    // a and b disagree on step 2; c sides with a, which still leaves b disagreeing: d is seated too.
    const answers = { a: [neg([2])], b: [], c: [neg([2])], d: [neg([2])] };
    const one = await judge(configOf({ start: 2, add: 'one', rules: ['disagree_step'] }), answers);
    expect(one.verdict.cascade).toEqual({ seats: ['a', 'b', 'c', 'd'], escalations: ['after 2 seats: disagree_step -> c', 'after 3 seats: disagree_step -> d'] });
    const all = await judge(configOf({ start: 2, add: 'all', rules: ['disagree_step'] }), answers);
    expect(all.verdict.cascade).toEqual({ seats: ['a', 'b', 'c', 'd'], escalations: ['after 2 seats: disagree_step -> c, d'] });
    // Agreement of 1/2 is below 0.6; with c it is 2/3: the cascade stops after one escalation.
    const settled = await judge(configOf({ start: 2, rules: ['low_confidence'], low_confidence_below: 0.6 }), { a: [neg([2])], b: [], c: [neg([2])] });
    expect(settled.verdict.cascade).toEqual({ seats: ['a', 'b', 'c'], escalations: ['after 2 seats: low_confidence -> c'] });
    // Every rule that fires is reported together.
    const both = await judge(configOf({ start: 1, rules: ['any_finding', 'fatal'] }), { a: [neg([3], 'fatal')], b: [], c: [], d: [] });
    expect(both.verdict.cascade!.escalations[0]).toBe('after 1 seats: any_finding, fatal -> b');
  });

  it('several rules: the ones that fire are named in configured order', async () => {
    const { verdict } = await judge(configOf({ start: 2, add: 'all', rules: ['fatal', 'disagree_step', 'empty'] }), { a: [neg([2], 'fatal')], b: [] });
    expect(verdict.cascade!.escalations).toEqual(['after 2 seats: fatal, disagree_step -> c, d']);
  });
});

describe('cascade with each Phase 2', () => {
  const answers = { a: [neg([2])], b: [neg([4])], c: [neg([2])], d: [neg([5])] };
  const cascade = { start: 2, add: 'one', rules: ['disagree_step'] };

  it('union: the findings of the seats that ran, and only theirs', async () => {
    const { verdict } = await judge(configOf({ ...cascade, start: 3, add: 'all' }), { ...answers, a: [neg([2])], b: [neg([2])], c: [neg([2])] });
    expect(verdict.cascade!.seats).toEqual(['a', 'b', 'c']);
    expect(verdict.defects.flatMap((d) => d.statement_refs)).toEqual([2, 2, 2]);
  });

  it('majority counts the seats that ran: 2 of 4 seated is not a majority, 2 of 3 is', async () => {
    // All four sit (a, b disagree; c sides with a; d differs): step 2 has 2 of 4 votes.
    const four = await judge(configOf(cascade, { mode: 'majority' }), answers);
    expect(four.verdict.cascade!.seats).toEqual(['a', 'b', 'c', 'd']);
    expect(four.verdict.defects).toEqual([]);
    // With c agreeing with a and b silent on it, three sit: step 2 has 2 of 3.
    const three = await judge(configOf({ ...cascade, rules: ['fatal', 'disagree_step'], add: 'all' }, { mode: 'majority', jurors: jurors.slice(0, 3) }), { a: [neg([2])], b: [], c: [neg([2])] });
    expect(three.verdict.cascade!.seats).toEqual(['a', 'b', 'c']);
    expect(three.verdict.defects.map((d) => [d.statement_refs, d.voters])).toEqual([[[2], ['a', 'c']]]);
  });

  it('consolidation: the consolidator sees the panel of the seats that ran', async () => {
    const { verdict, gateway } = await judge(configOf({ start: 2, rules: ['fatal'] }, { mode: 'consolidation' }), answers);
    expect(verdict.cascade).toEqual({ seats: ['a', 'b'], escalations: [] });
    const user = gateway.calls.find((c) => c.ctx.phase === 'consolidation')!.messages.map((m) => m.content).join('\n');
    const panel = JSON.parse(/<<<BEGIN PANEL FINDINGS \w+>>>\n([\s\S]*?)\n<<<END PANEL FINDINGS/.exec(user)![1]!) as Record<string, unknown>;
    expect(Object.keys(panel)).toEqual(['a', 'b']); // d's finding on step 5 is not there: d never ran
    expect(verdict.defects.flatMap((d) => d.statement_refs)).toEqual([2, 4]);
  });

  it('min_jurors counts the seats that ran; a failed start seat is replaced under `failed`', async () => {
    const failing = { a: new Error('400 bad request'), b: [neg([2])], c: [neg([2])] };
    const replaced = await judge(configOf({ start: 2, rules: ['failed'] }, { min_jurors: 2 }), failing);
    expect(replaced.verdict.cascade!.seats).toEqual(['a', 'b', 'c']);
    expect(replaced.verdict.error).toBeNull();
    expect(replaced.verdict.jurors_ok).toBe(2);
    const short = await judge(configOf({ start: 2, rules: ['fatal'] }, { min_jurors: 2 }), failing);
    expect(short.verdict.cascade!.seats).toEqual(['a', 'b']);
    expect(short.verdict.error).toMatch(/too few jurors/);
  });
});

describe('cascade with deliberation (simulator)', () => {
  it('only seats that ran speak; escalated and settled records both occur', async () => {
    const records = syntheticRecords(24, { seed: 16 });
    const config = parseConfig({
      endpoints: { sim: { kind: 'simulator', max_concurrency: 32 } },
      jurors: ['a', 'b', 'c'].map((m, i) => ({ id: `jury-${i}`, endpoint: 'sim', model: `sim-juror-${m}` })),
      moderator: { id: 'moderator', endpoint: 'sim', model: 'sim-consolidator' },
      mode: 'deliberation',
      phase1: { strategy: 'cascade', cascade: { start: 2, add: 'one', rules: ['disagree_step'] } },
      cache: { enabled: false, dir: '.cache/none' },
    } as JuryConfigInput);
    const rt = await openRuntime({ config, auditLogPath: null, providerFor: () => createSimProvider({ profile: withoutFaults(defaultProfile()), gold: buildGoldIndex(records), latency: 'instant' }) });
    const verdicts = [];
    try {
      for (const r of records) {
        const p = prepareRecord(r, config);
        if (!p.ok) throw new Error(p.error);
        verdicts.push(await judgeRecord(rt.jury, p.input));
      }
    } finally {
      await rt.close();
    }
    for (const v of verdicts) {
      const seats = new Set(v.cascade!.seats);
      expect(v.error).toBeNull();
      expect(v.phase1_judgements.map((j) => j.juror_id)).toEqual(v.cascade!.seats);
      for (const u of v.usage.filter((x) => x.phase === 'phase1' || x.phase === 'juror_turn')) expect(seats.has(u.participant)).toBe(true);
      for (const t of v.transcript) expect(seats.has(t.speaker)).toBe(true);
      // Escalated exactly when the two start seats disagreed on a step.
      const [a, b] = v.phase1_judgements;
      const steps = (j: typeof a) => new Set(j!.defects.flatMap((d) => d.statement_refs));
      const same = [...steps(a)].every((s) => steps(b).has(s)) && [...steps(b)].every((s) => steps(a).has(s));
      expect(v.cascade!.escalations.length > 0).toBe(!same);
    }
    const escalated = verdicts.filter((v) => v.cascade!.escalations.length > 0).length;
    expect(escalated).toBeGreaterThan(0);
    expect(escalated).toBeLessThan(verdicts.length);
    expect(verdicts.some((v) => v.transcript.length > 0)).toBe(true);
  });
});

describe('external seats in a cascade', () => {
  const steps = input.steps.length;
  const seats = [
    { id: 'prm', kind: 'external', format: 'step_scores', field: 'prm', threshold: 0.5 },
    { id: 'a', endpoint: 'sim', model: 'sim-juror-a' },
    { id: 'b', endpoint: 'sim', model: 'sim-juror-b' },
  ] as JuryConfigInput['jurors'];

  it('counts as a start seat, costs no call, and its disagreement escalates', async () => {
    const config = configOf({ start: 2, rules: ['disagree_step'] }, { jurors: seats });
    const ctx = (gateway: ModelGateway): JuryContext => ({ config: parseConfig(config), gateway, prompts, configHash: 'cfg' });
    // The PRM marks step 3 as wrong (score below 0.5); a flags nothing: b is seated.
    const scores = { prm: Array.from({ length: steps }, (_, i) => (i === 2 ? 0.1 : 0.9)) };
    const g1 = new ScriptedGateway({ a: [], b: [neg([3])] });
    const v1 = await judgeRecord(ctx(g1), { ...input, scores });
    expect(g1.called()).toEqual(['a', 'b']);
    expect(v1.cascade).toEqual({ seats: ['prm', 'a', 'b'], escalations: ['after 2 seats: disagree_step -> b'] });
    // They agree: only a is called.
    const g2 = new ScriptedGateway({ a: [neg([3])] });
    const v2 = await judgeRecord(ctx(g2), { ...input, scores });
    expect(g2.called()).toEqual(['a']);
    expect(v2.cascade).toEqual({ seats: ['prm', 'a'], escalations: [] });
    expect(v2.jurors_total).toBe(2);
  });
});

describe('the default is unchanged', () => {
  it('no cascade on the verdict; `strategy: all` hashes like no phase1 section; a cascade changes the hash', async () => {
    const plain = { ...defaultConfigInput(), jurors, mode: 'union' } as JuryConfigInput;
    const gateway = new ScriptedGateway({ a: [neg([2])], b: [] });
    const v = await judgeRecord({ config: parseConfig(plain), gateway, prompts, configHash: 'cfg' }, input);
    expect(v.cascade).toBeUndefined();
    expect(gateway.called()).toEqual(['a', 'b', 'c', 'd']);
    expect(configHash(parseConfig({ ...plain, phase1: { strategy: 'all' } }))).toBe(configHash(parseConfig(plain)));
    expect(configHash(parseConfig({ ...plain, phase1: { strategy: 'cascade' } }))).not.toBe(configHash(parseConfig(plain)));
  });

  it('mode single with a cascade is refused at load', () => {
    expect(() => parseConfig(configOf({}, { mode: 'single' }))).toThrow(/cascade needs a mode/);
  });
});

describe('a cascade that cannot work as configured is refused at load', () => {
  it('start above the number of seats', () => {
    expect(() => parseConfig(configOf({ start: 5 }))).toThrow(/phase1\.cascade\.start[\s\S]*is 5 but only 4 jurors are configured/);
    expect(() => parseConfig(configOf({ start: 4 }))).not.toThrow();
  });

  it('start: 1 with only rules that compare seats (they never fire on one seat)', () => {
    expect(() => parseConfig(configOf({ start: 1, rules: ['disagree_step', 'contested'] }))).toThrow(/disagree_step, contested compare seats, so with start: 1 none can fire/);
    expect(() => parseConfig(configOf({ start: 1, rules: ['disagree_step', 'fatal'] }))).not.toThrow();
    expect(() => parseConfig(configOf({ start: 2, rules: ['disagree_step'] }))).not.toThrow();
  });
});
