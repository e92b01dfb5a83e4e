import { describe, expect, it } from 'vitest';
import { JudgementOutput } from '../../schemas/defect.js';
import { BLOCK, type PanelEntry } from '../../src/prompts/build.js';
import { frameBlock } from '../../src/prompts/frame.js';
import { SimEngine, type EngineResult } from '../../src/sim/engine.js';
import { buildGoldIndex } from '../../src/sim/gold.js';
import { createRng } from '../../src/util/prng.js';
import { consolidationRequest, defectOn, oneModel, phase1Request, synthRecords, withinBinomial } from './helpers.js';

const records = synthRecords(300, { steps: 10, errorRate: 0.3, seed: 'consolidation' });
const gold = buildGoldIndex(records);
const JURORS = ['jury-0', 'jury-1', 'jury-2'];
const behaviour = { accept_true: 0.85, accept_false: 0.3, fill_recall: 0.4, fill_false_positive_rate: 0 };
const engine = new SimEngine({ profile: oneModel({ consolidator: behaviour, adjacent_rate: 0 }, 'cons'), gold });

function parse(r: EngineResult) {
  if (r.kind !== 'ok') throw new Error(JSON.stringify(r));
  expect(r.task).toBe('consolidation');
  return JudgementOutput.parse(JSON.parse(r.content)).negatives;
}
const num = (s: string | number) => Number(String(s).slice(5));

describe('consolidator', () => {
  it('adopts true and false candidates and fills missed gold steps at the profile rates', () => {
    const rng = createRng(['panel-builder']);
    const c = { trueGroups: 0, trueAdopted: 0, falseGroups: 0, falseAdopted: 0, missed: 0, filled: 0 };
    for (const rec of records) {
      const errs = new Set(rec.gold!.error_steps);
      // Each step is cited by a random subset of jurors (single-step candidates: one group per step).
      const citedBy = new Map<number, string[]>();
      for (let s = 1; s <= 10; s++) {
        const who = JURORS.filter(() => rng.chance(errs.has(s) ? 0.45 : 0.15));
        if (who.length) citedBy.set(s, who);
      }
      const panel: PanelEntry[] = JURORS.map((j) => ({ juror_id: j, defects: [...citedBy].filter(([, w]) => w.includes(j)).map(([s]) => defectOn([s], `by ${j}`)) }));
      const out = parse(engine.respond(consolidationRequest(rec, 'cons', panel), 1));
      const byStep = new Map(out.map((d) => [num(d.statement_refs[0]!), d]));
      for (let s = 1; s <= 10; s++) {
        const d = byStep.get(s);
        const who = citedBy.get(s);
        if (who) {
          if (errs.has(s)) (c.trueGroups++, d && c.trueAdopted++);
          else (c.falseGroups++, d && c.falseAdopted++);
          if (d) {
            expect(d.voters).toEqual(who); // panel order
            expect(d.vote_count).toBe(who.length);
          }
        } else if (errs.has(s)) {
          c.missed++;
          if (d) (c.filled++, expect(d).toMatchObject({ vote_count: 0, voters: [] }));
        } else expect(d).toBeUndefined(); // fill_false_positive_rate = 0
      }
    }
    expect(c.trueGroups).toBeGreaterThan(400);
    expect(c.falseGroups).toBeGreaterThan(300);
    expect(withinBinomial(c.trueAdopted / c.trueGroups, behaviour.accept_true, c.trueGroups)).toBe(true);
    expect(withinBinomial(c.falseAdopted / c.falseGroups, behaviour.accept_false, c.falseGroups)).toBe(true);
    expect(c.missed).toBeGreaterThan(100);
    expect(withinBinomial(c.filled / c.missed, behaviour.fill_recall, c.missed)).toBe(true);
  });

  it('merges candidates that share steps into one finding built on the most specific one', () => {
    const rec = records.find((r) => r.gold!.error_steps!.includes(3))!;
    const accept = new SimEngine({ profile: oneModel({ consolidator: { accept_true: 1, accept_false: 1, fill_recall: 0 } }, 'cons'), gold });
    const panel: PanelEntry[] = [
      { juror_id: 'jury-0', defects: [defectOn([3], 'short')] },
      { juror_id: 'jury-1', defects: [defectOn([3, 4], 'the longest and most specific description of the flaw')] },
      { juror_id: 'jury-2', defects: [defectOn([4], 'medium length text'), defectOn([8], 'unrelated')] },
    ];
    const out = parse(accept.respond(consolidationRequest(rec, 'cons', panel), 1));
    expect(out).toHaveLength(2);
    expect(out[0]).toMatchObject({ statement_refs: ['STEP-3', 'STEP-4'], vote_count: 3, voters: ['jury-0', 'jury-1', 'jury-2'] });
    expect(out[0]!.what_went_wrong).toContain('most specific');
    expect(out[1]).toMatchObject({ statement_refs: ['STEP-8'], vote_count: 1, voters: ['jury-2'] });
  });

  it('is deterministic for a given panel, and ignores refs outside the trace', () => {
    const rec = records[0]!;
    const panel: PanelEntry[] = [{ juror_id: 'a', defects: [defectOn([2]), defectOn([99])] }];
    const r1 = engine.respond(consolidationRequest(rec, 'cons', panel, 4), 1);
    expect(engine.respond(consolidationRequest(rec, 'cons', panel, 4), 1)).toEqual(r1);
    expect(parse(r1).every((d) => d.statement_refs.every((s) => num(s) <= 10))).toBe(true);
  });

  it('answers 400 when the panel block is not the JSON renderPanel writes', () => {
    const req = phase1Request(records[0]!, 'cons');
    req.messages[1]!.content += `\n${frameBlock(BLOCK.panel, 'jury-0 thinks step 3 is wrong')}`;
    expect(engine.respond(req, 1)).toMatchObject({ kind: 'error', status: 400, code: 'invalid_task_input' });
  });
});
