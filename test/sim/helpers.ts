import type { Defect } from '../../schemas/defect.js';
import { JudgementOutput } from '../../schemas/defect.js';
import type { TraceRecord } from '../../schemas/trace.js';
import type { ChatRequest } from '../../src/llm/types.js';
import { consolidationMessages, phase1Messages, type PanelEntry, type TraceInput } from '../../src/prompts/build.js';
import { loadPromptSet } from '../../src/prompts/templates.js';
import { segmentRecord } from '../../src/segment/index.js';
import { createRng } from '../../src/util/prng.js';
import { parseProfile, type ModelEntryInput, type SimProfile } from '../../src/sim/profile.js';

export const PROMPTS = loadPromptSet();

const NOUNS = ['apples', 'the radius', 'the triangle', 'x', 'the sum', 'the integral', 'the probability', 'n', 'the velocity', 'the remainder'];
const VERBS = ['equals', 'is at most', 'becomes', 'simplifies to', 'is divisible by', 'converges to'];

/** Deterministic synthetic records with given steps and gold error steps. */
export function synthRecords(n: number, opts: { steps?: number; errorRate?: number; seed?: string } = {}): TraceRecord[] {
  const rng = createRng(['synth', opts.seed ?? 'x']);
  const out: TraceRecord[] = [];
  for (let r = 0; r < n; r++) {
    const k = opts.steps ?? 10;
    const steps: string[] = [];
    for (let s = 1; s <= k; s++) {
      const a = rng.int(2, 99);
      const b = rng.int(2, 99);
      steps.push(`Step ${s} of record ${r}: ${rng.pick(NOUNS)} ${rng.pick(VERBS)} ${a} * ${b} = ${a * b}, so ${rng.pick(NOUNS)} "${rng.pick(NOUNS)}" ${rng.pick(VERBS)} ${a + b}.`);
    }
    const error_steps: number[] = [];
    for (let s = 1; s <= k; s++) if (rng.chance(opts.errorRate ?? 0.25)) error_steps.push(s);
    out.push({ id: `rec-${r}`, problem: `Problem ${r}: find ${rng.pick(NOUNS)} given [STEP-2] style notes.`, steps, meta: {}, gold: { error_steps } });
  }
  return out;
}

export function traceInput(rec: TraceRecord): TraceInput {
  return { problem: rec.problem, steps: segmentRecord(rec), final_solution: rec.final_solution };
}

export function phase1Request(rec: TraceRecord, model: string, seed?: number): ChatRequest {
  return { model, messages: phase1Messages(PROMPTS, traceInput(rec), true), temperature: 1, ...(seed !== undefined ? { seed } : {}) };
}

export function consolidationRequest(rec: TraceRecord, model: string, panel: PanelEntry[], seed?: number): ChatRequest {
  return { model, messages: consolidationMessages(PROMPTS, traceInput(rec), true, panel), ...(seed !== undefined ? { seed } : {}) };
}

export function defectOn(refs: number[], text = 'a finding'): Defect {
  return { statement_refs: refs, what_went_wrong: `[STEP-${refs[0]}] ${text}`, impact: 'major', evidence: `[STEP-${refs[0]}] 'quote'` };
}

/** Profile with one model `m` (and no default) built from `entry`. */
export function oneModel(entry: ModelEntryInput, name = 'm', seed = 1): SimProfile {
  return parseProfile({ seed, models: { [name]: entry } });
}

/** Steps a juror's JSON reply cites. */
export function citedSteps(content: string): Set<number> {
  const out = JudgementOutput.parse(JSON.parse(content));
  return new Set(out.negatives.flatMap((d) => d.statement_refs.map((r) => Number(String(r).replace('STEP-', '')))));
}

/** |observed - expected| within k standard errors of a binomial proportion (plus a small floor). */
export function withinBinomial(observed: number, p: number, n: number, k = 4): boolean {
  const se = Math.sqrt((p * (1 - p)) / n);
  return Math.abs(observed - p) <= k * se + 1e-9 + (se === 0 ? 0.001 : 0);
}
