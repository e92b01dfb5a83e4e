import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { CallUsage } from '../../schemas/usage.js';
import { Verdict } from '../../schemas/verdict.js';
import { defaultConfigInput, parseConfig } from '../../src/config/load.js';
import { NOTHING_NEW } from '../../src/prompts/deliberation-wire.js';
import { judgeRecord, type JuryContext } from '../../src/jury/judge.js';
import { type CallResult, type ChatMessage, ModelCallError, type ModelGateway, type StructuredCall, type TextCall } from '../../src/llm/types.js';
import { loadPromptSet } from '../../src/prompts/templates.js';
import { segmentRecord } from '../../src/segment/index.js';
import { DELIB_BLOCK } from '../../src/jury/deliberation/render.js';
import { topLevelBlocks } from '../../src/sim/blocks.js';
import { applyJournal } from './helpers/journal.js';

/** Scripted replies per phase: the loop's decisions are tested here, the real client in deliberation-openai.test.ts. */
type Reply = unknown | Error;
class Script implements ModelGateway {
  calls: Array<{ phase: string; participant: string; messages: ChatMessage[] }> = [];
  constructor(private readonly reply: (phase: string, participant: string, user: string, n: number) => Reply) {}
  private usage(phase: CallUsage['phase'], participant: string, outcome: 'ok' | 'error'): CallUsage {
    return { phase, participant, model: 'm', endpoint: 'scripted', tokens_in: 100, tokens_out: 10, cost_usd: 0, latency_ms: 1, attempts: 1, outcome };
  }
  private next(phase: CallUsage['phase'], participant: string, messages: ChatMessage[]): Reply {
    this.calls.push({ phase, participant, messages });
    const n = this.calls.filter((c) => c.phase === phase && c.participant === participant).length;
    const out = this.reply(phase, participant, messages[messages.length - 1]!.content, n);
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
  phases(): string[] {
    return this.calls.map((c) => `${c.phase}:${c.participant}`);
  }
}

const prompts = loadPromptSet();
const steps = segmentRecord({ trace: 'One.\n\nTwo.\n\nThree.\n\nFour.' });
const input = { id: 'r1', problem: 'p', steps };
const neg = (refs: string[], impact = 'major') => ({ statement_refs: refs, what_went_wrong: `wrong at ${refs}`, impact, evidence: 'e' });
const phase1 = (participant: string) => ({ negatives: participant === 'jury-0' ? [neg(['STEP-2'])] : participant === 'jury-1' ? [neg(['STEP-2']), neg(['STEP-4'])] : [] });

function ctx(gateway: ModelGateway, over: Record<string, unknown> = {}): JuryContext {
  const config = parseConfig({ ...defaultConfigInput(), mode: 'deliberation', moderator: { id: 'moderator', endpoint: 'sim', model: 'sim-moderator' }, ...over });
  return { config, gateway, prompts, configHash: 'cfg' };
}

/** A moderator that picks the first juror not yet heard this round and never ends anything itself. */
function procedural(user: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  const waiting = /- Not yet heard in this round: (.*)/.exec(user)![1]!;
  const all = /- All panelists: (.*)/.exec(user)![1]!;
  const next = (waiting === '(none)' ? all : waiting).split(', ')[0];
  return { should_terminate: false, termination_reason: null, next_speaker: next, instruction: `${next}: take up the open points.`, reasoning: 'r', consensus_state: { consensus_map: [] }, ...over };
}

const extraction = { consensus_defects: [], confidence: 0.5, dissenting_views: [] };

describe('deliberation loop (scripted models)', () => {
  it('a juror whose turns throw is skipped, then removed after two failures in a row; the rest carry on', async () => {
    const gw = new Script((phase, who, user) => {
      if (phase === 'phase1') return phase1(who);
      if (phase === 'moderator') return procedural(user);
      if (phase === 'juror_turn') return who === 'jury-1' ? new Error('context length exceeded') : NOTHING_NEW;
      return extraction;
    });
    const v = await judgeRecord(ctx(gw), input);
    expect(Verdict.parse(v)).toEqual(v);
    expect(v.transcript.map((t) => t.speaker)).toEqual(['jury-0', 'jury-2', 'jury-0', 'jury-2']);
    expect(gw.phases().filter((p) => p === 'juror_turn:jury-1')).toHaveLength(2);
    expect(v.termination_reason).toBe('no_new_arguments'); // the backstop: a whole round said nothing new
    expect(v.degraded_reason).toMatch(/jury-1 at turn 2 \(.*context length exceeded\)/);
    expect(v.degraded_reason).toMatch(/removed after 2 failed turns in a row: jury-1/);
    expect(v.usage.filter((u) => u.phase === 'juror_turn' && u.outcome === 'error')).toHaveLength(2);
    expect(v.rounds).toBe(2);
  });

  it('an ending called before every juror has spoken is ignored; after a full round it is taken', async () => {
    const gw = new Script((phase, who, user, n) => {
      if (phase === 'phase1') return phase1(who);
      if (phase === 'moderator') return procedural(user, { should_terminate: n === 1 || n >= 4, termination_reason: 'cycling' });
      if (phase === 'juror_turn') return `I maintain my finding on [STEP-2]; turn ${n} of ${who}.`;
      return extraction;
    });
    const v = await judgeRecord(ctx(gw), input);
    expect(v.transcript).toHaveLength(3);
    expect(new Set(v.transcript.map((t) => t.speaker))).toEqual(new Set(['jury-0', 'jury-1', 'jury-2']));
    expect(v.termination_reason).toBe('cycling');
    expect(v.rounds).toBe(1);
    expect(v.degraded).toBe(false);
  });

  it('a failing moderator falls back to round-robin with the fixed instruction, and is not asked after two failures in a row', async () => {
    const gw = new Script((phase, who) => {
      if (phase === 'phase1') return phase1(who);
      if (phase === 'moderator') return new Error('invalid JSON after one re-ask');
      if (phase === 'juror_turn') return NOTHING_NEW;
      return extraction;
    });
    const v = await judgeRecord(ctx(gw, { deliberation: { max_turns: 5 } }), input);
    expect(gw.phases().filter((p) => p.endsWith(':moderator'))).toEqual(['moderator:moderator', 'moderator:moderator', 'extraction:moderator']);
    expect(v.transcript.map((t) => t.speaker)).toEqual(['jury-0', 'jury-1', 'jury-2']);
    expect(v.transcript.every((t) => t.instruction === prompts.templates['moderator.fallback'].trim())).toBe(true);
    expect(v.termination_reason).toBe('no_new_arguments');
    expect(v.degraded_reason).toMatch(/moderator failed 2 of 2 decisions .*round-robin order used instead; not asked again/);
  });

  it('a speaker that is not on the panel is replaced by the round-robin pick and the fixed instruction', async () => {
    const gw = new Script((phase, who, user) => {
      if (phase === 'phase1') return phase1(who);
      if (phase === 'moderator') return procedural(user, { next_speaker: 'jury-7', should_terminate: /Rounds completed: 1/.test(user) });
      if (phase === 'juror_turn') return `A point from ${who} about [STEP-2].`;
      return extraction;
    });
    const v = await judgeRecord(ctx(gw), input);
    expect(v.transcript.map((t) => [t.speaker, t.instruction])).toEqual(['jury-0', 'jury-1', 'jury-2'].map((j) => [j, prompts.templates['moderator.fallback'].trim()]));
    expect(v.degraded).toBe(false);
  });

  it('the extraction may not bend the majority rule: short votes become dissent, unknown voters are dropped', async () => {
    const gw = new Script((phase, who, user) => {
      if (phase === 'phase1') return phase1(who);
      if (phase === 'moderator') return procedural(user, { should_terminate: /Rounds completed: 1/.test(user), termination_reason: 'no new arguments' });
      if (phase === 'juror_turn') return NOTHING_NEW;
      return {
        consensus_defects: [
          { ...neg(['STEP-2']), voters: ['jury-0', 'ghost', 'jury-1'], vote_count: 3, basis: 'majority' },
          { ...neg(['STEP-4']), voters: ['jury-1'], vote_count: 1, basis: 'majority' },
          { ...neg(['STEP-3']), voters: ['jury-2'], vote_count: 1, basis: 'uncontested' },
        ],
        confidence: '0.75',
        dissenting_views: ['jury-2 thinks STEP-1 is vague'],
      };
    });
    const v = await judgeRecord(ctx(gw), input);
    const user = gw.calls.find((c) => c.phase === 'extraction')!.messages[1]!.content;
    expect(user).toContain('Majority needed for consensus: 2 of 3');
    expect(v.defects.map((d) => [d.statement_refs, d.voters, d.vote_count])).toEqual([
      [[2], ['jury-0', 'jury-1'], 2],
      [[3], ['jury-2'], 1],
    ]);
    expect(v.dissenting_views).toEqual(['jury-2 thinks STEP-1 is vague', expect.stringMatching(/^jury-1 \(major, STEP-4; 1 of 2 needed\)/)]);
    expect(v.confidence).toBe(0.75);
    expect(v.dropped_refs).toBe(0);
    expect(v.termination_reason).toBe('no_new_arguments');
  });

  it('an extraction citing a step past the end of the trace fails its schema rather than losing the finding quietly', async () => {
    const gw = new Script((phase, who, user) => {
      if (phase === 'phase1') return phase1(who);
      if (phase === 'moderator') return procedural(user, { should_terminate: /Rounds completed: 1/.test(user), termination_reason: 'no new arguments' });
      if (phase === 'juror_turn') return NOTHING_NEW;
      return { ...extraction, consensus_defects: [{ ...neg(['STEP-9']), voters: ['jury-0', 'jury-1'], vote_count: 2, basis: 'majority' }] };
    });
    const v = await judgeRecord(ctx(gw), input);
    expect(v.degraded).toBe(true);
    expect(v.degraded_reason).toMatch(/STEP-9\W{0,3} is not a step of this trace: it has 4 steps/);
  });

  it('adaptive max_rounds stops a focused deliberation after its round budget, as turn_cap', async () => {
    const gw = new Script((phase, who, user) => {
      if (phase === 'phase1') return phase1(who);
      if (phase === 'moderator') return procedural(user);
      if (phase === 'juror_turn') return `Still arguing, ${who}, about [STEP-4].`;
      return extraction;
    });
    const v = await judgeRecord(ctx(gw, { deliberation: { adaptive: { enabled: true, max_rounds: 1 } } }), input);
    expect(v.transcript).toHaveLength(3);
    expect([v.termination_reason, v.rounds]).toEqual(['turn_cap', 1]);
    expect(gw.phases().filter((p) => p === 'moderator:moderator')).toHaveLength(3); // no decision after the last turn
  });

  it('each decision reads back exactly the state the previous one returned, with at most recent_window turns shown', async () => {
    // A moderator whose state changes on every decision: support moves, an item is reworded, one is dropped.
    const stateAfter = (n: number) => ({
      consensus_map: [
        { consensus_id: 'C1', what_went_wrong: n >= 3 ? 'wrong at STEP-2, reworded' : 'wrong at STEP-2', source_ref: n % 2 ? ['jury-0'] : ['jury-0', 'jury-1'], statement_refs: ['STEP-2'], judge_count: n % 2 ? 1 : 2, impact: 'major', evidence: 'e', contested_by: [] },
        ...(n < 4 ? [{ consensus_id: 'C2', what_went_wrong: 'wrong at STEP-4', source_ref: ['jury-1'], statement_refs: ['STEP-4'], impact: 'minor', evidence: 'e' }] : []),
      ],
    });
    const gw = new Script((phase, who, user, n) => {
      if (phase === 'phase1') return phase1(who);
      if (phase === 'moderator') return procedural(user, { consensus_state: stateAfter(n) });
      if (phase === 'juror_turn') return `Turn ${n} of ${who}: still about [STEP-2].`;
      return extraction;
    });
    const v = await judgeRecord(ctx(gw, { deliberation: { recent_window: 2, max_turns: 7 } }), input);
    expect(v.transcript).toHaveLength(7);
    const decisions = gw.calls.filter((c) => c.phase === 'moderator').map((c) => c.messages[1]!.content);
    expect(decisions).toHaveLength(7); // none after the seventh turn: the cap ends the loop first
    decisions.forEach((user, k) => {
      expect(applyJournal(user)).toEqual(k === 0 ? { consensus_map: [] } : stateAfter(k));
      const shown = topLevelBlocks(user).filter((b) => b.label === DELIB_BLOCK.turn).length;
      expect(shown).toBeLessThanOrEqual(2);
      expect(user).toContain(`- Earlier turns not shown above: ${k - shown}`);
    });
    const ext = gw.calls.find((c) => c.phase === 'extraction')!.messages[1]!.content;
    expect(applyJournal(ext)).toEqual(stateAfter(7));
    expect(topLevelBlocks(ext).filter((b) => b.label === DELIB_BLOCK.turn).map((b) => b.content)).toEqual(v.transcript.map((t) => t.message));
  });

  it('with one juror left after phase 1 there is nobody to deliberate with: phase 1 aggregate, marked', async () => {
    const gw = new Script((phase, who) => (phase === 'phase1' ? (who === 'jury-0' ? phase1(who) : new Error('HTTP 500')) : new Error('not expected')));
    const v = await judgeRecord(ctx(gw, { min_jurors: 1 }), input);
    expect(gw.phases().every((p) => p.startsWith('phase1'))).toBe(true);
    expect(v.termination_reason).toBe('error');
    expect(v.defects.map((d) => d.statement_refs)).toEqual([[2]]);
    expect(v.degraded_reason).toMatch(/deliberation needs at least 2 jurors, 1 succeeded/);
  });
});
