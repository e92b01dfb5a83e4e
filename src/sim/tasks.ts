import { createHash } from 'node:crypto';
import { IMPACT_RANK, parseStepRef, type Impact } from '../../schemas/defect.js';
import type { ChatRequest } from '../llm/types.js';
import { BLOCK } from '../prompts/build.js';
import { parseRenderedSteps } from '../prompts/frame.js';
import type { GoldEntry } from './gold.js';
import { createRng, weighted, type Rng } from '../util/prng.js';
import type { ModelProfile } from './profile.js';
import { DELIBERATION_TASKS } from './deliberation-moderator.js';
import { TAXONOMY_TASKS } from './taxonomy-tasks.js';
import { PASS_TASKS } from './pass-tasks.js';
import { repairTask } from './repair-task.js';
import { describeDefect, describeInvented } from './text.js';

/**
 * The tasks the simulator can play. Each recognises its prompt by which top-level framed blocks
 * it carries and returns a JSON value (or plain text) plus a few notes for reasoning_content.
 * A later task (moderator, deliberating juror, extraction, taxonomy) is one more SimTask in the
 * list handed to the engine; nothing else needs to change.
 */

export interface TaskInput {
  request: ChatRequest;
  modelName: string;
  model: ModelProfile;
  /** label -> content of the top-level framed blocks */
  blocks: ReadonlyMap<string, string>;
  /** rendered step texts (neutralised), index 0 = STEP-1; empty when the prompt has no trace */
  steps: readonly string[];
  /** gold for this trace; null = unknown trace, treated as clean */
  gold: GoldEntry | null;
  /** the content stream for this request (independent of the attempt number) */
  rng: Rng;
}

export type TaskOutput =
  | { kind: 'json'; value: Record<string, unknown>; notes: string[] }
  | { kind: 'text'; text: string; notes: string[] };

export { TaskInputError } from './task-error.js';
import { TaskInputError } from './task-error.js';

export interface SimTask {
  name: string;
  detect(blocks: ReadonlyMap<string, string>, request: ChatRequest): boolean;
  /** extra material for the content stream beyond model/seed/record (e.g. the panel) */
  streamKey?(blocks: ReadonlyMap<string, string>): string;
  run(input: TaskInput): TaskOutput;
}

/** True when the prompt has all of `required` and no block outside `allowed`. */
export function blocksAre(blocks: ReadonlyMap<string, string>, required: readonly string[], allowed: readonly string[]): boolean {
  return required.every((l) => blocks.has(l)) && [...blocks.keys()].every((l) => allowed.includes(l));
}

const PHASE1_BLOCKS = [BLOCK.problem, BLOCK.trace, BLOCK.final];

export function stepsOf(blocks: ReadonlyMap<string, string>): string[] {
  const trace = blocks.get(BLOCK.trace);
  return trace === undefined ? [] : parseRenderedSteps(trace);
}

function goldSet(gold: GoldEntry | null): Set<number> {
  return new Set(gold?.error_steps ?? []);
}

function severity(rng: Rng, model: ModelProfile, isTrue: boolean): Impact {
  return weighted(rng, isTrue ? model.severity_mix : (model.fp_severity_mix ?? model.severity_mix));
}

function stepId(n: number): string {
  return `STEP-${n}`;
}

/** A finding over `refs`, as a model writes it (STEP-n strings). */
function modelDefect(rng: Rng, model: ModelProfile, steps: readonly string[], refs: number[], impact: Impact): Record<string, unknown> {
  const t = describeDefect(rng, steps, refs, impact, model.words_per_defect);
  return { statement_refs: refs.map(stepId), what_went_wrong: t.what_went_wrong, impact, evidence: t.evidence, ...(t.correct_value ? { correct_value: t.correct_value } : {}) };
}

// ---- Phase 1: one juror's independent audit (App. B) ------------------------------------

/**
 * `miss_correlation` ρ: the draw a gold-error step uses, given the juror's own. With probability ρ
 * (the juror's own stream, apart from the content stream) it is the record's shared draw for the
 * step, the same for every juror, so their misses coincide. Null when ρ is 0 or the record has no
 * gold: then nothing extra is drawn and replies are what they were without the knob.
 */
function missDraws(model: ModelProfile, gold: GoldEntry | null, modelName: string, seed: number | undefined): ((step: number, own: number) => number) | null {
  const rho = model.miss_correlation ?? 0;
  if (rho === 0 || !gold) return null;
  return (step, own) => (createRng(['miss-copy', modelName, seed ?? null, gold.id, step]).chance(rho) ? createRng(['miss-shared', gold.id, step]).next() : own);
}

export const phase1Task: SimTask = {
  name: 'phase1',
  // Exactly the Phase 1 blocks: a prompt with any other block belongs to another task.
  detect: (b) => blocksAre(b, [BLOCK.trace], PHASE1_BLOCKS),
  run({ request, modelName, model, steps, gold, rng }) {
    const errors = goldSet(gold);
    const shared = missDraws(model, gold, modelName, request.seed);
    // One draw per step, always, so a step's fate does not depend on its neighbours' gold.
    const flagged: Array<{ step: number; impact: Impact }> = [];
    for (let s = 1; s <= steps.length; s++) {
      const isTrue = errors.has(s);
      const own = rng.next();
      const u = isTrue && shared ? shared(s, own) : own;
      if (u < (isTrue ? model.recall : model.false_positive_rate)) flagged.push({ step: s, impact: severity(rng, model, isTrue) });
    }
    const negatives: Record<string, unknown>[] = [];
    const notes: string[] = [];
    for (let i = 0; i < flagged.length; i++) {
      const cur = flagged[i]!;
      const next = flagged[i + 1];
      const refs = [cur.step];
      let impact = cur.impact;
      // Two flagged neighbours sometimes become one finding citing both (error carried forward).
      if (next && next.step === cur.step + 1 && rng.chance(model.adjacent_rate)) {
        refs.push(next.step);
        if (IMPACT_RANK[next.impact] > IMPACT_RANK[impact]) impact = next.impact;
        i++;
      }
      const finding = modelDefect(rng, model, steps, refs, impact);
      // A ref beyond the trace: the gateway must re-ask, and never store it.
      if (rng.chance(model.rate_bad_ref)) (finding.statement_refs as string[]).push(stepId(steps.length + 1 + rng.int(0, 3)));
      negatives.push(finding);
      notes.push(`[STEP-${refs[0]}] looks wrong to me (${impact}).`);
    }
    // Drawn only when the knob is on, so profiles without it keep their streams.
    if (model.invent_rate > 0) negatives.push(...inventedFindings(rng, model, steps.length, errors, negatives.length));
    return { kind: 'json', value: { negatives }, notes };
  },
};

/**
 * Invented findings beside `genuine` real ones: each genuine finding brings one with probability
 * r / (1 - r), so invented findings are a share r of the juror's findings in expectation. Each
 * cites a clean step (an invented flaw, so a false positive) and quotes words the trace lacks.
 */
function inventedFindings(rng: Rng, model: ModelProfile, nSteps: number, errors: ReadonlySet<number>, genuine: number): Record<string, unknown>[] {
  const clean = Array.from({ length: nSteps }, (_, i) => i + 1).filter((s) => !errors.has(s));
  if (clean.length === 0) return [];
  const odds = model.invent_rate / (1 - model.invent_rate);
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < Math.max(genuine, 1); i++) {
    if (!rng.chance(genuine === 0 ? model.invent_rate : odds)) continue;
    const step = rng.pick(clean);
    const impact = severity(rng, model, false);
    const t = describeInvented(rng, step, impact, model.words_per_defect);
    out.push({ statement_refs: [stepId(step)], what_went_wrong: t.what_went_wrong, impact, evidence: t.evidence });
  }
  return out;
}

// ---- Consolidation: verify, merge and fill the panel's candidates (App. C.1) -------------

interface Candidate {
  voter: string;
  refs: number[];
  raw: Record<string, unknown>;
}

/** The panel block as renderPanel writes it: { juror_id: { negatives: [...] } }. */
export function parsePanel(content: string, nSteps: number): { voters: string[]; candidates: Candidate[] } {
  let obj: unknown;
  try {
    obj = JSON.parse(content);
  } catch (e) {
    throw new TaskInputError(`the ${BLOCK.panel} block is not JSON: ${(e as Error).message}`);
  }
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) throw new TaskInputError(`the ${BLOCK.panel} block must be a JSON object keyed by juror id`);
  const voters: string[] = [];
  const candidates: Candidate[] = [];
  for (const [voter, entry] of Object.entries(obj as Record<string, unknown>)) {
    voters.push(voter);
    const negs = (entry as { negatives?: unknown } | null)?.negatives;
    if (!Array.isArray(negs)) throw new TaskInputError(`panel entry "${voter}" has no "negatives" list`);
    for (const d of negs) {
      if (!d || typeof d !== 'object') continue;
      const rawRefs = (d as { statement_refs?: unknown }).statement_refs;
      const refs = (Array.isArray(rawRefs) ? rawRefs : [rawRefs]).map(parseStepRef).filter((n): n is number => n !== null && n <= nSteps);
      if (refs.length > 0) candidates.push({ voter, refs: [...new Set(refs)].sort((a, b) => a - b), raw: d as Record<string, unknown> });
    }
  }
  return { voters, candidates };
}

/** Candidates that share any cited step describe the same flaw (union-find over steps). */
export function groupCandidates(candidates: readonly Candidate[]): Candidate[][] {
  const parent = candidates.map((_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i]!)));
  const owner = new Map<number, number>();
  candidates.forEach((c, i) => {
    for (const r of c.refs) {
      const o = owner.get(r);
      if (o === undefined) owner.set(r, i);
      else parent[find(i)] = find(o);
    }
  });
  const groups = new Map<number, Candidate[]>();
  candidates.forEach((c, i) => {
    const root = find(i);
    groups.set(root, [...(groups.get(root) ?? []), c]);
  });
  const minRef = (g: Candidate[]): number => Math.min(...g.flatMap((c) => c.refs));
  return [...groups.values()].sort((a, b) => minRef(a) - minRef(b));
}

export const consolidationTask: SimTask = {
  name: 'consolidation',
  detect: (b) => blocksAre(b, [BLOCK.trace, BLOCK.panel], [...PHASE1_BLOCKS, BLOCK.panel]),
  streamKey: (b) => createHash('sha256').update(b.get(BLOCK.panel) ?? '').digest('hex'),
  run({ model, steps, gold, rng, blocks }) {
    const errors = goldSet(gold);
    const c = model.consolidator;
    const { voters: panelOrder, candidates } = parsePanel(blocks.get(BLOCK.panel) ?? '', steps.length);
    const out: Array<{ first: number; defect: Record<string, unknown> }> = [];
    const notes: string[] = [];
    for (const group of groupCandidates(candidates)) {
      const refs = [...new Set(group.flatMap((g) => g.refs))].sort((a, b) => a - b);
      const isTrue = refs.some((r) => errors.has(r));
      const accepted = rng.chance(isTrue ? c.accept_true : c.accept_false);
      const impact = severity(rng, model, isTrue); // rated afresh, as the addendum asks
      notes.push(`Candidate on [STEP-${refs[0]}]: ${accepted ? 'the trace bears it out' : 'the trace does not support it'}.`);
      if (!accepted) continue;
      // Build on the most specific candidate: the longest description.
      const wording = (g: Candidate): string => (typeof g.raw.what_went_wrong === 'string' ? g.raw.what_went_wrong : '');
      const base = group.reduce((best, g) => (wording(g).length > wording(best).length ? g : best));
      const evidence = [...new Set(group.map((g) => g.raw.evidence).filter((e): e is string => typeof e === 'string' && e.length > 0))].join('; ');
      const voters = panelOrder.filter((v) => group.some((g) => g.voter === v));
      const defect: Record<string, unknown> = {
        statement_refs: refs.map(stepId),
        what_went_wrong: wording(base) || modelDefect(rng, model, steps, refs, impact).what_went_wrong,
        impact,
        evidence,
        vote_count: voters.length,
        voters,
      };
      if (typeof base.raw.correct_value === 'string') defect.correct_value = base.raw.correct_value;
      out.push({ first: refs[0]!, defect });
    }
    // Cover what the panel missed: one draw per uncited step, in order.
    const cited = new Set(candidates.flatMap((g) => g.refs));
    for (let s = 1; s <= steps.length; s++) {
      if (cited.has(s)) continue;
      const isTrue = errors.has(s);
      if (rng.next() >= (isTrue ? c.fill_recall : c.fill_false_positive_rate)) continue;
      const d = modelDefect(rng, model, steps, [s], severity(rng, model, isTrue));
      out.push({ first: s, defect: { ...d, vote_count: 0, voters: [] } });
      notes.push(`The panel missed [STEP-${s}].`);
    }
    out.sort((a, b) => a.first - b.first);
    return { kind: 'json', value: { negatives: out.map((o) => o.defect) }, notes };
  },
};

/** Detectors are exact about their blocks, so order only matters for overlapping custom tasks. */
export const DEFAULT_TASKS: readonly SimTask[] = [consolidationTask, phase1Task, ...TAXONOMY_TASKS, ...DELIBERATION_TASKS, ...PASS_TASKS, repairTask];
