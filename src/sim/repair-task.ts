import { createHash } from 'node:crypto';
import type { ChatRequest } from '../llm/types.js';
import { BLOCK } from '../prompts/build.js';
import { REPAIR_BLOCK } from '../prompts/repair.js';
import type { Rng } from '../util/prng.js';
import type { GoldEntry } from './gold.js';
import type { ModelProfile } from './profile.js';
import { TaskInputError } from './task-error.js';

/**
 * The generator of defect-guided repair as the simulator plays it (src/jury/repair.ts). It
 * recognises the retry prompt by its findings block (FLAGGED STEPS: `steps`, REVIEW FINDINGS:
 * `full`), reads the earlier answer off the earlier trace and compares it with the record's
 * reference answer (the gold's `reference_answer`, else a number derived from the problem
 * text: the simulator's own synthetic key). A wrong earlier answer is fixed with the
 * condition's `fix_rate`, a right one broken with `regress_rate`; one draw per retry from the
 * content stream, which the seed (so the attempt) and the condition key. The reply is a short
 * re-solution ending in an `ANSWER:` line.
 *
 * The earlier answer is read here with the simulator's own rule (the last ANSWER line of the
 * trace, else the last number of its last step), not the pipeline's extractor, so a bug there
 * shows up as a mismatch in the tests rather than agreeing with itself.
 */

// Matches SimTask (src/sim/tasks.ts) structurally; tasks.ts registers it.
interface TaskInput {
  request: ChatRequest;
  model: ModelProfile;
  blocks: ReadonlyMap<string, string>;
  steps: readonly string[];
  gold: GoldEntry | null;
  rng: Rng;
}
type TaskOutput = { kind: 'text'; text: string; notes: string[] };

function conditionOf(blocks: ReadonlyMap<string, string>): 'steps' | 'full' | null {
  if (blocks.has(REPAIR_BLOCK.steps)) return 'steps';
  if (blocks.has(REPAIR_BLOCK.full)) return 'full';
  return null;
}

/** The earlier trace's answer by the simulator's own rule; null when it has none. */
export function simOriginalAnswer(steps: readonly string[]): string | null {
  const all = steps.join('\n');
  const marked = [...all.matchAll(/ANSWER\s*:\s*([^\n]+)/gi)].pop();
  if (marked) return marked[1]!.trim();
  const nums = (steps[steps.length - 1] ?? '').match(/-?\d+(?:\.\d+)?/g);
  return nums ? nums[nums.length - 1]! : null;
}

/** The reference answer of a problem without one in the gold: stable, in 0..999. */
export function syntheticReference(problem: string): string {
  return String(createHash('sha256').update('reference\0').update(problem).digest().readUInt32BE(0) % 1000);
}

const same = (a: string, b: string): boolean => {
  const x = Number(a);
  const y = Number(b);
  return Number.isFinite(x) && Number.isFinite(y) && a.trim() !== '' && b.trim() !== '' ? x === y : a.trim().toLowerCase() === b.trim().toLowerCase();
};

/** A wrong answer: a number near the reference, or the reference with a suffix when it is not a number. */
function wrongAnswer(rng: Rng, reference: string, avoid: string | null): string {
  const n = Number(reference);
  if (!Number.isFinite(n)) return `${reference} (not)`;
  let w = String(n + rng.int(1, 97));
  if (avoid !== null && same(w, avoid) === false && rng.chance(0.5)) w = avoid;
  return w;
}

export const repairTask = {
  name: 'repair',
  detect: (blocks: ReadonlyMap<string, string>): boolean => blocks.has(BLOCK.problem) && blocks.has(BLOCK.trace) && conditionOf(blocks) !== null,
  streamKey: (blocks: ReadonlyMap<string, string>): string => `repair:${conditionOf(blocks)}`,
  run({ model, blocks, steps, gold, rng }: TaskInput): TaskOutput {
    const condition = conditionOf(blocks);
    if (!condition) throw new TaskInputError('no findings block');
    const problem = blocks.get(BLOCK.problem) ?? '';
    const reference = gold?.reference_answer ?? syntheticReference(problem);
    const before = simOriginalAnswer(steps);
    const wasRight = before !== null && same(before, reference);
    const rates = model.generator[condition];
    const u = rng.next();
    const right = wasRight ? u >= rates.regress_rate : u < rates.fix_rate;
    const answer = right ? reference : wrongAnswer(rng, reference, wasRight ? null : before);
    const flagged = (blocks.get(condition === 'steps' ? REPAIR_BLOCK.steps : REPAIR_BLOCK.full) ?? '').match(/\[STEP-\d+\]/g) ?? [];
    const lines = [`I start again from the problem statement and do not reuse ${flagged.length ? [...new Set(flagged)].join(', ') : 'the earlier steps'} without checking them.`];
    while (lines.join(' ').split(/\s+/).length < model.generator.words) lines.push(`Working it through once more, each quantity is recomputed from the givens rather than taken from the earlier attempt.`);
    return { kind: 'text', text: `${lines.join('\n\n')}\n\nANSWER: ${answer}`, notes: [`${condition}: earlier answer ${before ?? 'none'} was ${wasRight ? 'right' : 'wrong'}; now ${right ? 'right' : 'wrong'}`] };
  },
};
