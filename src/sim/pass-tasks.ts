import { createHash } from 'node:crypto';
import { parseStepRef } from '../../schemas/defect.js';
import { BLOCK } from '../prompts/build.js';
import { CLAIM_BLOCK, PASS_BLOCK } from '../prompts/passes.js';
import { parseRenderedSteps } from '../prompts/frame.js';
import { createRng, type Rng } from '../util/prng.js';
import { renderJson } from './text.js';
import type { ChatRequest } from '../llm/types.js';
import type { GoldEntry } from './gold.js';
import type { ModelProfile } from './profile.js';
import { TaskInputError } from './task-error.js';

/**
 * The verification passes as the simulator plays them (src/jury/passes): the removal pass keeps
 * or drops each consensus finding, the arbiter upholds or rejects each contested one. A finding
 * is true when it cites a gold-error step; the model's `removal` / `arbiter` rates decide. One
 * draw per finding, in order, from the content stream; a failure (broken JSON) is drawn from a
 * stream that includes the conversation length, so the gateway's re-ask draws again.
 */

// These tasks match SimTask (src/sim/tasks.ts) structurally; tasks.ts registers them, so no import back.
interface TaskInput {
  request: ChatRequest;
  model: ModelProfile;
  blocks: ReadonlyMap<string, string>;
  gold: GoldEntry | null;
  rng: Rng;
}
type TaskOutput = { kind: 'json'; value: Record<string, unknown>; notes: string[] } | { kind: 'text'; text: string; notes: string[] };
interface PassSimTask {
  name: string;
  detect(blocks: ReadonlyMap<string, string>): boolean;
  streamKey(blocks: ReadonlyMap<string, string>): string;
  run(input: TaskInput): TaskOutput;
}

interface SimFinding {
  id: string;
  refs: number[];
}

function parseFindings(content: string): SimFinding[] {
  let list: unknown;
  try {
    list = JSON.parse(content);
  } catch (e) {
    throw new TaskInputError(`the findings block is not JSON: ${(e as Error).message}`);
  }
  if (!Array.isArray(list)) throw new TaskInputError('the findings block must be a JSON list');
  return list.map((f: { id?: unknown; statement_refs?: unknown }) => ({
    id: String(f?.id ?? ''),
    refs: (Array.isArray(f?.statement_refs) ? f.statement_refs : []).map(parseStepRef).filter((n): n is number => n !== null),
  }));
}

const PASS_CONTEXT: readonly string[] = [BLOCK.problem, BLOCK.trace, BLOCK.final];

/** Exactly the trace blocks and this pass's findings block. */
function isPass(b: ReadonlyMap<string, string>, label: string): boolean {
  return b.has(BLOCK.trace) && b.has(label) && [...b.keys()].every((l) => l === label || PASS_CONTEXT.includes(l));
}
const digest = (s: string | undefined): string => createHash('sha256').update(s ?? '').digest('hex');

function failed(rng: Rng, input: TaskInput, rate: number): boolean {
  return createRng(['pass-fail', rng.next(), input.request.messages.length]).chance(rate);
}

function passTask(name: string, label: string, play: (input: TaskInput, findings: SimFinding[], errors: Set<number>) => { key: string; value: Record<string, unknown>[] }, failRate: (i: TaskInput) => number): PassSimTask {
  return {
    name,
    detect: (b) => isPass(b, label),
    streamKey: (b) => digest(b.get(label)),
    run(input): TaskOutput {
      const fail = failed(input.rng, input, failRate(input));
      const findings = parseFindings(input.blocks.get(label) ?? '[]');
      const out = play(input, findings, new Set(input.gold?.error_steps ?? []));
      const value = { [out.key]: out.value };
      if (fail) return { kind: 'text', text: renderJson(input.rng, value, 'malformed_broken'), notes: ['Lost track of the format.'] };
      return { kind: 'json', value, notes: out.value.map((v) => `${String(v.id)}: ${String(v.reason ?? v.rationale)}`) };
    },
  };
}

const cites = (f: SimFinding): string => f.refs.map((r) => `[STEP-${r}]`).join(', ') || 'the cited step';

export const removalTask = passTask(
  'removal',
  PASS_BLOCK.consensus,
  ({ model, rng }, findings, errors) => ({
    key: 'decisions',
    value: findings.map((f) => {
      const isTrue = f.refs.some((r) => errors.has(r));
      const keep = isTrue ? rng.chance(model.removal.keep_true) : !rng.chance(model.removal.drop_false);
      return { id: f.id, keep, reason: keep ? `${cites(f)} does contain the claim the finding attacks.` : `${cites(f)} does not say what the finding quotes; the step holds up.` };
    }),
  }),
  (i) => i.model.removal.fail_rate,
);

export const arbiterTask = passTask(
  'arbiter',
  PASS_BLOCK.contested,
  ({ model, rng }, findings, errors) => ({
    key: 'rulings',
    value: findings.map((f) => {
      const isTrue = f.refs.some((r) => errors.has(r));
      const upheld = isTrue ? rng.chance(model.arbiter.uphold_true) : !rng.chance(model.arbiter.reject_false);
      return { id: f.id, ruling: upheld ? 'upheld' : 'rejected', rationale: upheld ? `${cites(f)} makes the faulty claim as described.` : `${cites(f)} is correct as written; the finding misreads it.` };
    }),
  }),
  (i) => i.model.arbiter.fail_rate,
);

const norm = (s: string): string => s.toLowerCase().replace(/\s+/g, ' ').trim();
const QUOTED = /"([^"]+)"|\u201c([^\u201d]+)\u201d/g;

/** True when one of the claim's quoted spans is in a step the claim cites (whitespace and case aside). */
export function claimGrounded(claim: string, steps: readonly string[]): boolean {
  const refs = [...claim.matchAll(/\[STEP-(\d+)\]/gi)].map((m) => Number(m[1]));
  const quotes = [...claim.matchAll(QUOTED)].map((m) => norm(m[1] ?? m[2] ?? '')).filter(Boolean);
  return quotes.some((q) => refs.some((r) => steps[r - 1] !== undefined && norm(steps[r - 1]!).includes(q)));
}

/** The deliberation grounding checker: grounded or not, judged from the trace in the prompt, at the `grounding_checker` rates. */
export const groundingCheckTask: PassSimTask = {
  name: 'grounding-check',
  detect: (b) => isPass(b, CLAIM_BLOCK),
  streamKey: (b) => digest(b.get(CLAIM_BLOCK)),
  run(input): TaskOutput {
    const rates = input.model.grounding_checker;
    const fail = failed(input.rng, input, rates.fail_rate);
    const isTrue = claimGrounded(input.blocks.get(CLAIM_BLOCK) ?? '', parseRenderedSteps(input.blocks.get(BLOCK.trace) ?? ''));
    const grounded = isTrue ? input.rng.chance(rates.accept_true) : !input.rng.chance(rates.reject_false);
    const value = { grounded, reason: grounded ? 'The cited steps say what the claim quotes.' : 'The quoted words are not in the cited steps.' };
    if (fail) return { kind: 'text', text: renderJson(input.rng, value, 'malformed_broken'), notes: ['Lost track of the format.'] };
    return { kind: 'json', value, notes: [value.reason] };
  },
};

export const PASS_TASKS: readonly PassSimTask[] = [removalTask, arbiterTask, groundingCheckTask];
