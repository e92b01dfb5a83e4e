import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BLOCK } from '../../src/prompts/build.js';
import { blockMap } from '../../src/sim/blocks.js';
import { buildGoldIndex, goldErrorSteps, loadGoldFile } from '../../src/sim/gold.js';
import { phase1Request } from './helpers.js';

function blocksOf(rec: Parameters<typeof phase1Request>[0]) {
  const b = blockMap(phase1Request(rec, 'm').messages.map((m) => m.content).join('\n'));
  return { problem: b.get(BLOCK.problem) ?? null, trace: b.get(BLOCK.trace)! };
}

const segmented = {
  id: 'seg',
  problem: 'Compute 2+2. Ignore [STEP-9] in this problem text.',
  trace: 'First, 2+2 is 5.\n\nSo the answer is 5.\n\nDone, the answer is 5!',
  meta: {},
  gold: { first_error_step: 1 },
};
const given = { id: 'given', problem: 'Name a prime.', steps: ['9 is prime.', 'So [STEP-1] says 9.'], meta: {}, gold: { error_steps: [1, 2, 7] } };

describe('gold index', () => {
  it('finds a record from the blocks of the prompt built for it (segmented and given steps)', () => {
    const idx = buildGoldIndex([segmented, given]);
    expect(idx.size).toBe(2);
    const a = blocksOf(segmented);
    expect(idx.lookup(a.problem, a.trace)).toEqual({ id: 'seg', n_steps: 3, error_steps: [1] });
    const b = blocksOf(given);
    // step 7 does not exist: dropped
    expect(idx.lookup(b.problem, b.trace)).toEqual({ id: 'given', n_steps: 2, error_steps: [1, 2] });
  });

  it('reads a reference answer kept under gold (gold.reference_answer, a number as text); a top-level one wins', () => {
    const a = blocksOf(segmented);
    expect(buildGoldIndex([{ ...segmented, gold: { first_error_step: 1, reference_answer: 4 } }]).lookup(a.problem, a.trace)?.reference_answer).toBe('4');
    expect(buildGoldIndex([{ ...segmented, reference_answer: '5', gold: { reference_answer: '4' } }]).lookup(a.problem, a.trace)?.reference_answer).toBe('5');
    expect(buildGoldIndex([segmented]).lookup(a.problem, a.trace)?.reference_answer).toBeUndefined();
  });

  it('falls back to the trace alone when the problem text differs, unless that is ambiguous', () => {
    const idx = buildGoldIndex([given]);
    expect(idx.lookup('another wording', blocksOf(given).trace)?.id).toBe('given');
    const twin = { ...given, id: 'twin', problem: 'Other problem', gold: { error_steps: [2] } };
    expect(buildGoldIndex([given, twin]).lookup('third wording', blocksOf(given).trace)).toBeNull();
  });

  it('uses error_steps, else first_error_step, else nothing', () => {
    expect(goldErrorSteps({ error_steps: [3, 1, 3] }, 5)).toEqual([1, 3]);
    expect(goldErrorSteps({ first_error_step: 4 }, 5)).toEqual([4]);
    expect(goldErrorSteps({ first_error_step: null, final_answer_correct: true }, 5)).toEqual([]);
    expect(goldErrorSteps(undefined, 5)).toEqual([]);
  });

  it('loads JSONL, skipping (and reporting) lines it cannot use', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sim-gold-'));
    const file = join(dir, 'gold.jsonl');
    writeFileSync(file, [JSON.stringify(segmented), '', '{not json', JSON.stringify({ id: 'x', problem: 'p' }), JSON.stringify(given), ''].join('\n'));
    const idx = loadGoldFile(file);
    expect(idx.size).toBe(2);
    expect(idx.skipped.map((s) => s.line)).toEqual([3, 4]);
    expect(idx.skipped[0]!.reason).toMatch(/invalid JSON/);
    expect(idx.skipped[1]!.reason).toMatch(/trace/);
  });
});
