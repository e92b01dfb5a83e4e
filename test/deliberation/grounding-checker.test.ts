import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { CallUsage } from '../../schemas/usage.js';
import { Verdict } from '../../schemas/verdict.js';
import { defaultConfigInput, parseConfig } from '../../src/config/load.js';
import { passesOn } from '../../src/derive/detail.js';
import { detailRow } from '../../src/derive/detail.js';
import { judgeRecord, type JuryContext } from '../../src/jury/judge.js';
import { type CallResult, type ChatMessage, ModelCallError, type ModelGateway, type StructuredCall, type TextCall } from '../../src/llm/types.js';
import { NOTHING_NEW } from '../../src/prompts/deliberation-wire.js';
import { loadPromptSet, type TemplateName } from '../../src/prompts/templates.js';
import { segmentRecord } from '../../src/segment/index.js';
import { openRuntime } from '../../src/compose/runtime.js';

/** Scripted replies per phase, so what the checker does with each claim is what is tested. */
type Reply = unknown | Error;
class Script implements ModelGateway {
  calls: Array<{ phase: string; participant: string; user: string }> = [];
  constructor(private readonly reply: (phase: string, participant: string, user: string, n: number) => Reply) {}
  private usage(phase: CallUsage['phase'], participant: string, outcome: 'ok' | 'error'): CallUsage {
    return { phase, participant, model: 'm', endpoint: 'scripted', tokens_in: 100, tokens_out: 10, cost_usd: 0, latency_ms: 1, attempts: 1, outcome };
  }
  private next(phase: CallUsage['phase'], participant: string, messages: ChatMessage[]): Reply {
    const user = messages[messages.length - 1]!.content;
    this.calls.push({ phase, participant, user });
    const n = this.calls.filter((c) => c.phase === phase && c.participant === participant).length;
    const out = this.reply(phase, participant, user, n);
    if (out instanceof Error) throw new ModelCallError(out.message, this.usage(phase, participant, 'error'));
    return out;
  }
  async structured<T>(call: StructuredCall<T>): Promise<CallResult<T>> {
    const out = this.next(call.ctx.phase, call.ctx.participant, call.messages);
    return { value: (call.schema as z.ZodType<T>).parse(out), raw: JSON.stringify(out), usage: this.usage(call.ctx.phase, call.ctx.participant, 'ok'), cached: false };
  }
  async text(call: TextCall): Promise<CallResult<string>> {
    const out = this.next(call.ctx.phase, call.ctx.participant, call.messages) as string;
    return { value: out, raw: out, usage: this.usage(call.ctx.phase, call.ctx.participant, 'ok'), cached: false };
  }
}

const prompts = loadPromptSet();
const trace = ['We start with 12 apples in the basket.', 'Then we add 1,000 more apples, giving 1012 apples.', 'Half of them is \\frac{1012}{2} = 506.', 'The answer is 506.'];
const input = { id: 'r1', problem: 'p', steps: segmentRecord({ trace: trace.join('\n\n') }) };
const neg = (step: number) => ({ statement_refs: [`STEP-${step}`], what_went_wrong: `wrong at ${step}`, impact: 'major', evidence: `[STEP-${step}] 'giving 1012 apples'` });

const GROUNDED = "New defect on [STEP-3] (major): the step says 'Half of them is 1012/2 = 506' but the basket count was wrong.";
const INVENTED = "New defect on [STEP-4] (major): the step says 'the answer is 77 oranges in total', which contradicts the problem.";

/** jury-0 raises a grounded new claim, jury-1 an invented one, everyone else has nothing new; the moderator never ends. */
function script(grounding: () => Reply) {
  return (phase: string, who: string, user: string, n: number): Reply => {
    if (phase === 'phase1') return { negatives: [neg(2)] };
    if (phase === 'moderator') {
      const waiting = /- Not yet heard in this round: (.*)/.exec(user)![1]!;
      const all = /- All panelists: (.*)/.exec(user)![1]!;
      const next = (waiting === '(none)' ? all : waiting).split(', ')[0];
      return { should_terminate: false, termination_reason: null, next_speaker: next, instruction: 'go on', reasoning: 'r', consensus_state: { consensus_map: [] } };
    }
    if (phase === 'juror_turn') return n === 1 && who === 'jury-0' ? `I maintain [STEP-2].\n\n${GROUNDED}` : n === 1 && who === 'jury-1' ? INVENTED : NOTHING_NEW;
    if (phase === 'grounding') return grounding();
    return { consensus_defects: [], confidence: 0.5, dissenting_views: [] };
  };
}

function ctx(gateway: ModelGateway, grounding: Record<string, unknown> | undefined, mode = 'deliberation'): JuryContext {
  const config = parseConfig({ ...defaultConfigInput(), mode, moderator: { id: 'moderator', endpoint: 'sim', model: 'sim-moderator' }, ...(grounding ? { grounding } : {}), deliberation: { max_turns: 6 } });
  return { config, gateway, prompts, configHash: 'cfg' };
}

const moderatorViews = (gw: Script) => gw.calls.filter((c) => c.phase === 'moderator' || c.phase === 'extraction').map((c) => c.user);

describe('grounding checker in deliberation', () => {
  it('deterministic: a grounded new claim reaches the moderator; an invented one is withheld with the note, kept in the transcript, recorded', async () => {
    const gw = new Script(script(() => new Error('not asked')));
    const v = await judgeRecord(ctx(gw, { policy: 'keep', checker: {} }), input);
    expect(Verdict.parse(v)).toEqual(v);
    const after = moderatorViews(gw).slice(2).join('\n');
    expect(after).toContain('Half of them is 1012/2 = 506');
    expect(after).not.toContain('77 oranges');
    expect(after).toContain('Grounding check: a new claim on [STEP-4] was withheld');
    expect(v.transcript.find((t) => t.speaker === 'jury-1')!.message).toBe(INVENTED);
    expect(v.grounding!.claim_checks!.map((c) => [c.speaker, c.refs, c.decided_by, c.result])).toEqual([
      ['jury-0', '3', 'deterministic', 'grounded'],
      ['jury-1', '4', 'deterministic', 'ungrounded'],
    ]);
    expect(gw.calls.some((c) => c.phase === 'grounding')).toBe(false);
    expect(detailRow(v).claim_checks).toHaveLength(2);
  });

  it('with the model check: it decides what the deterministic check could not ground (phase grounding)', async () => {
    const gw = new Script(script(() => ({ grounded: false, reason: 'step 4 says 506' })));
    const v = await judgeRecord(ctx(gw, { policy: 'keep', checker: { model: true } }), input);
    expect(gw.calls.filter((c) => c.phase === 'grounding').map((c) => c.participant)).toEqual(['grounding']);
    expect(v.grounding!.claim_checks!.map((c) => [c.refs, c.decided_by, c.result])).toEqual([
      ['3', 'deterministic', 'grounded'],
      ['4', 'model', 'ungrounded'],
    ]);
    expect(v.usage.filter((u) => u.phase === 'grounding')).toHaveLength(1);
    expect(v.degraded_reason ?? '').not.toMatch(/grounding checker/);
  });

  it('a failed checker call accepts the claim (benefit of the doubt) and records that it did', async () => {
    const gw = new Script(script(() => new Error('invalid JSON after one re-ask')));
    const v = await judgeRecord(ctx(gw, { policy: 'keep', checker: { model: true } }), input);
    const check = v.grounding!.claim_checks!.find((c) => c.refs === '4')!;
    expect(check).toMatchObject({ decided_by: 'failure', result: 'accepted_on_failure' });
    expect(check.error).toMatch(/invalid JSON/);
    expect(moderatorViews(gw).slice(2).join('\n')).toContain('77 oranges');
    expect(v.usage.filter((u) => u.phase === 'grounding' && u.outcome === 'error')).toHaveLength(1);
    expect(v.degraded).toBe(true);
    expect(v.degraded_reason).toMatch(/grounding checker failed on 1 claim\(s\) \(.*invalid JSON.*\); accepted unchecked: /);
  });

  it('off (no checker section, or enabled: false): every turn reaches the moderator as spoken, nothing recorded', async () => {
    for (const g of [{ policy: 'keep' }, { policy: 'keep', checker: { enabled: false } }]) {
      const gw = new Script(script(() => new Error('not asked')));
      const v = await judgeRecord(ctx(gw, g), input);
      expect(moderatorViews(gw).slice(2).join('\n')).toContain('77 oranges');
      expect(v.grounding!.claim_checks).toBeUndefined();
    }
  });
});

describe('prompt hash', () => {
  const hashOf = async (grounding: Record<string, unknown> | undefined, mode = 'deliberation') => {
    const config = parseConfig({ ...defaultConfigInput(), mode, moderator: { id: 'moderator', endpoint: 'sim', model: 'sim-moderator' }, ...(grounding ? { grounding } : {}) });
    const rt = await openRuntime({ config, auditLogPath: null, providerFor: () => ({ name: 'x', complete: async () => { throw new Error('no call'); } }) });
    try {
      return rt.jury.prompts.hash;
    } finally {
      await rt.close();
    }
  };
  it('configs without the checker keep their prompt_hash; the checker templates count only when it is on', async () => {
    const none = await hashOf(undefined);
    expect(await hashOf({ policy: 'drop' })).toBe(none);
    expect(await hashOf({ policy: 'off', checker: { model: true } })).toBe(none);
    expect(await hashOf({ policy: 'drop', checker: { enabled: false, model: true } })).toBe(none);
    const note = await hashOf({ policy: 'drop', checker: {} });
    const model = await hashOf({ policy: 'drop', checker: { model: true } });
    expect(new Set([none, note, model]).size).toBe(3);
    // outside deliberation the checker is never used
    expect(await hashOf({ policy: 'drop', checker: { model: true } }, 'consolidation')).toBe(await hashOf(undefined, 'consolidation'));
    expect(loadPromptSet(undefined, new Set<TemplateName>()).hash).toBe(loadPromptSet().hash);
  });
  it('grounding on turns verdict_details on under auto', () => {
    expect(passesOn(parseConfig({ ...defaultConfigInput(), grounding: { policy: 'keep' } }))).toBe(true);
    expect(passesOn(parseConfig({ ...defaultConfigInput(), grounding: { policy: 'off' } }))).toBe(false);
    expect(passesOn(parseConfig(defaultConfigInput()))).toBe(false);
  });
});
