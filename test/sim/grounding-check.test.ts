import { describe, expect, it } from 'vitest';
import { GroundingCheckOutput } from '../../schemas/passes.js';
import type { ChatRequest } from '../../src/llm/types.js';
import { groundingCheckMessages } from '../../src/prompts/passes.js';
import { SimEngine } from '../../src/sim/engine.js';
import { buildGoldIndex } from '../../src/sim/gold.js';
import { oneModel, PROMPTS, synthRecords, traceInput, withinBinomial } from './helpers.js';

// seed and sizes fixed before looking at any result
const records = synthRecords(150, { steps: 6, errorRate: 0.3, seed: 'grounding-check' });
const gold = buildGoldIndex(records);
const request = (messages: ChatRequest['messages']): ChatRequest => ({ model: 'checker', messages, temperature: 0 });

function words(text: string, n: number): string {
  return text.split(/\s+/).filter(Boolean).slice(0, n).join(' ');
}

describe('simulated grounding checker', () => {
  it('calls claims grounded or not from the cited steps, at the profile rates', () => {
    const engine = new SimEngine({ profile: oneModel({ grounding_checker: { accept_true: 0.85, reject_false: 0.7 } }, 'checker'), gold });
    const c = { trueN: 0, accepted: 0, falseN: 0, rejected: 0 };
    for (const rec of records) {
      const input = traceInput(rec);
      input.steps.forEach((s, i) => {
        // a true claim quotes its step; a false one quotes the next step while citing this one
        const other = input.steps[(i + 1) % input.steps.length]!.text;
        for (const [isTrue, quote] of [[true, words(s.text, 5)], [false, `${words(other, 5)} zq${i}`]] as const) {
          const claim = `[STEP-${i + 1}] is wrong: it says "${quote}".`;
          const r = engine.respond(request(groundingCheckMessages(PROMPTS, input, claim, `[STEP-${i + 1}]`)), 1);
          if (r.kind !== 'ok') throw new Error(JSON.stringify(r));
          expect(r.task).toBe('grounding-check');
          const out = GroundingCheckOutput.parse(JSON.parse(r.content));
          if (isTrue) (c.trueN++, out.grounded && c.accepted++);
          else (c.falseN++, !out.grounded && c.rejected++);
        }
      });
    }
    expect(c.trueN).toBe(900);
    expect(withinBinomial(c.accepted / c.trueN, 0.85, c.trueN)).toBe(true);
    expect(withinBinomial(c.rejected / c.falseN, 0.7, c.falseN)).toBe(true);
  });

  it('fail_rate: broken JSON at the rate', () => {
    const engine = new SimEngine({ profile: oneModel({ grounding_checker: { fail_rate: 0.3 } }, 'checker'), gold });
    let broken = 0;
    for (const rec of records) {
      const input = traceInput(rec);
      const r = engine.respond(request(groundingCheckMessages(PROMPTS, input, `[STEP-1] says "${words(input.steps[0]!.text, 4)}".`, '[STEP-1]')), 1);
      if (r.kind !== 'ok') throw new Error(JSON.stringify(r));
      if (!GroundingCheckOutput.safeParse((() => { try { return JSON.parse(r.content); } catch { return null; } })()).success) broken++;
    }
    expect(withinBinomial(broken / records.length, 0.3, records.length)).toBe(true);
  });
});
