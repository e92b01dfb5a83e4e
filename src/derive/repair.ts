import type { FilterPolicy, RepairAnswerConfig, RepairConfig } from '../../schemas/config.js';
import type { AnswerSource } from '../../schemas/repair.js';
import type { TraceRecord } from '../../schemas/trace.js';
import { type DecisionFacts, decideFacts } from './decision.js';

/**
 * Pure parts of defect-guided repair (paper App. N): which records are retried (the gate),
 * where a retry's answer is (extraction) and whether it equals the reference (comparison).
 */

/** The gate that selects this record, or null when it is not retried. A record without a verdict never is. */
export function repairGate(gate: Pick<RepairConfig, 'gate' | 'rules'>, facts: DecisionFacts): string | null {
  if (facts.error) return null;
  if (gate.gate === 'any_defect') return facts.defects.some((d) => d.impact !== 'neutral') ? 'any_defect' : null;
  if (gate.gate === 'fatal') return facts.defects.some((d) => d.impact === 'fatal') ? 'fatal' : null;
  // `rules`: the first rule that matches decides, as in the filter; drop or review retries.
  for (const [i, rule] of (gate.rules ?? []).entries()) {
    const one: FilterPolicy = { rules: [rule], default: 'keep' };
    const d = decideFacts(facts, one);
    if (d.reason === 'no rule matched') continue;
    return d.decision === 'keep' ? null : (rule.name ?? `rule ${i + 1}`);
  }
  return null;
}

export interface Extracted {
  answer: string | null;
  source: AnswerSource;
}

const MARKER = /^[ \t>*_#-]*ANSWER[ \t*_]*[:：][ \t*_]*(.*?)[ \t*_]*$/gim;

/** The value of the last `ANSWER:` line; when the text was cut, only a line that ended before the cut. */
function markerAnswer(text: string, truncated: boolean): string | null {
  let found: string | null = null;
  for (const m of text.matchAll(MARKER)) {
    const complete = !truncated || text.length > m.index + m[0].length;
    const v = m[1]!.trim();
    if (complete && v !== '') found = v;
  }
  return found;
}

/** Content of the last \boxed{...}, braces balanced. */
function lastBoxed(text: string): string | null {
  const at = text.lastIndexOf('\\boxed{');
  if (at < 0) return null;
  let depth = 0;
  for (let i = at + 6; i < text.length; i++) {
    if (text[i] === '{') depth++;
    else if (text[i] === '}' && --depth === 0) return text.slice(at + 7, i).trim() || null;
  }
  return null;
}

const NUMBER = /-?\d[\d,]*(?:\.\d+)?/g;

/**
 * A retry's (or an original trace's) final answer: the last `ANSWER:` line first; then, only
 * when the text was not cut at max_tokens, the last \boxed{} and then the last number of the
 * final non-empty line. A cut text has no fallback: a number in a truncated tail is reasoning
 * in progress, not an answer (App. N.1).
 */
export function extractAnswer(text: string, finishReason: string | null): Extracted {
  const truncated = finishReason === 'length';
  const marked = markerAnswer(text, truncated);
  if (marked !== null) return { answer: marked, source: 'marker' };
  if (truncated) return { answer: null, source: 'none' };
  const boxed = lastBoxed(text);
  if (boxed !== null) return { answer: boxed, source: 'fallback' };
  const lastLine = text.trimEnd().split('\n').pop() ?? '';
  const nums = lastLine.match(NUMBER);
  return nums ? { answer: nums[nums.length - 1]!.replace(/,/g, ''), source: 'fallback' } : { answer: null, source: 'none' };
}

/** A number in an answer ("1,024", "$42.", "\\boxed{7}", "x = 12"): the last one; null when none. */
function numberOf(answer: string): number | null {
  const inner = lastBoxed(answer) ?? answer;
  const nums = inner.match(NUMBER);
  if (!nums) return null;
  const n = Number(nums[nums.length - 1]!.replace(/,/g, ''));
  return Number.isFinite(n) ? n : null;
}

function foldText(s: string): string {
  return s.normalize('NFKC').trim().replace(/\s+/g, ' ').replace(/[.。]$/, '').toLowerCase();
}

function foldChoice(s: string): string {
  return foldText(s).replace(/^\(?\s*([^()]*?)\s*\)?$/, '$1');
}

/** Does `answer` equal `reference` under the contract's normalisation? null when either is missing. */
export function answersMatch(answer: string | null, reference: string | null | undefined, kind: RepairAnswerConfig['kind']): boolean | null {
  if (reference === null || reference === undefined) return null;
  if (answer === null) return false;
  if (kind === 'integer') {
    const a = numberOf(answer);
    const r = numberOf(reference);
    if (a === null || r === null) return foldText(answer) === foldText(reference);
    return Math.abs(a - r) <= 1e-9 * Math.max(1, Math.abs(r));
  }
  return kind === 'choice' ? foldChoice(answer) === foldChoice(reference) : foldText(answer) === foldText(reference);
}

/** The original trace's final answer: its final response when it has one, else the trace's last steps. */
export function originalText(record: Pick<TraceRecord, 'final_solution' | 'trace' | 'steps'>): string {
  return record.final_solution?.trim() || record.trace || (record.steps ?? []).join('\n\n');
}

/**
 * The original answer of a record and whether it equals its reference: what the repair step
 * writes as `original_answer` / `original_correct`, and what `eval repair` derives for every
 * corpus record when no --originals file is given (one definition for both).
 */
export function originalOutcome(record: Pick<TraceRecord, 'final_solution' | 'trace' | 'steps' | 'reference_answer'>, kind: RepairAnswerConfig['kind']): { answer: string | null; correct: boolean | null } {
  const answer = extractAnswer(originalText(record), null).answer;
  return { answer, correct: answersMatch(answer, record.reference_answer ?? null, kind) };
}
