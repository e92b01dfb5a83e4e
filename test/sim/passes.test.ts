import { describe, expect, it } from 'vitest';
import { ArbiterOutput, RemovalOutput } from '../../schemas/passes.js';
import type { ChatRequest } from '../../src/llm/types.js';
import { arbiterMessages, removalMessages } from '../../src/prompts/passes.js';
import { SimEngine, type EngineResult } from '../../src/sim/engine.js';
import { buildGoldIndex } from '../../src/sim/gold.js';
import { defectOn, oneModel, PROMPTS, synthRecords, traceInput, withinBinomial } from './helpers.js';

const records = synthRecords(200, { steps: 8, errorRate: 0.3, seed: 'passes' });
const gold = buildGoldIndex(records);
// Every step of every record is a finding: the ones on gold steps are true, the rest unsupported.
const everyStep = [1, 2, 3, 4, 5, 6, 7, 8].map((s) => defectOn([s], `finding on ${s}`));
const request = (messages: ChatRequest['messages']): ChatRequest => ({ model: 'checker', messages, temperature: 0 });

function ok(r: EngineResult, task: string): unknown {
  if (r.kind !== 'ok') throw new Error(JSON.stringify(r));
  expect(r.task).toBe(task);
  return JSON.parse(r.content);
}

describe('simulated verification passes', () => {
  it('removal pass: keeps true findings and drops unsupported ones at the profile rates', () => {
    const engine = new SimEngine({ profile: oneModel({ removal: { keep_true: 0.9, drop_false: 0.6 } }, 'checker'), gold });
    const c = { trueN: 0, trueKept: 0, falseN: 0, falseDropped: 0 };
    for (const rec of records) {
      const errs = new Set(rec.gold!.error_steps);
      const out = RemovalOutput.parse(ok(engine.respond(request(removalMessages(PROMPTS, traceInput(rec), everyStep)), 1), 'removal'));
      expect(out.decisions.map((d) => d.id)).toEqual(everyStep.map((_, i) => `F${i + 1}`));
      out.decisions.forEach((d, i) => {
        if (errs.has(i + 1)) (c.trueN++, d.keep && c.trueKept++);
        else (c.falseN++, !d.keep && c.falseDropped++);
      });
    }
    expect(c.trueN).toBeGreaterThan(300);
    expect(withinBinomial(c.trueKept / c.trueN, 0.9, c.trueN)).toBe(true);
    expect(withinBinomial(c.falseDropped / c.falseN, 0.6, c.falseN)).toBe(true);
  });

  it('arbiter: upholds true and rejects false contested findings at the profile rates', () => {
    const engine = new SimEngine({ profile: oneModel({ arbiter: { uphold_true: 0.8, reject_false: 0.7 } }, 'checker'), gold });
    const c = { trueN: 0, upheld: 0, falseN: 0, rejected: 0 };
    for (const rec of records) {
      const errs = new Set(rec.gold!.error_steps);
      const out = ArbiterOutput.parse(ok(engine.respond(request(arbiterMessages(PROMPTS, traceInput(rec), everyStep, everyStep.map(() => 'split vote'))), 1), 'arbiter'));
      out.rulings.forEach((r, i) => {
        if (errs.has(i + 1)) (c.trueN++, r.ruling === 'upheld' && c.upheld++);
        else (c.falseN++, r.ruling === 'rejected' && c.rejected++);
      });
    }
    expect(withinBinomial(c.upheld / c.trueN, 0.8, c.trueN)).toBe(true);
    expect(withinBinomial(c.rejected / c.falseN, 0.7, c.falseN)).toBe(true);
  });

  it('fail_rate: broken JSON, and a re-ask (a longer conversation) draws again', () => {
    const readable = (x: EngineResult): boolean => {
      if (x.kind !== 'ok') return false;
      try {
        return RemovalOutput.safeParse(JSON.parse(x.content)).success;
      } catch {
        return false;
      }
    };
    const always = new SimEngine({ profile: oneModel({ removal: { fail_rate: 1 } }, 'checker'), gold });
    expect(readable(always.respond(request(removalMessages(PROMPTS, traceInput(records[0]!), everyStep)), 1))).toBe(false);
    const half = new SimEngine({ profile: oneModel({ removal: { fail_rate: 0.5 } }, 'checker'), gold });
    let broken = 0;
    let redrawn = 0;
    for (const r of records.slice(0, 100)) {
      const m = removalMessages(PROMPTS, traceInput(r), everyStep);
      const first = readable(half.respond(request(m), 1));
      const reask = readable(half.respond(request([...m, { role: 'assistant', content: 'x' }, { role: 'user', content: 'again, as JSON' }]), 1));
      if (!first) broken++;
      if (!first && reask) redrawn++;
    }
    expect(broken).toBeGreaterThan(25);
    expect(redrawn).toBeGreaterThan(5);
  });
});
