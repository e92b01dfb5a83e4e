import type { Defect } from '../../schemas/defect.js';
import type { ChatMessage } from '../llm/types.js';
import { BLOCK, type TraceInput } from './build.js';
import { frameBlock, neutralizeMarkers, renderSteps } from './frame.js';
import { fillTemplate, type PromptSet } from './templates.js';

/** Framed block labels of the verification passes (the simulator tells the passes apart by them). */
export const PASS_BLOCK = { consensus: 'CONSENSUS FINDINGS', contested: 'CONTESTED FINDINGS' } as const;

/** The id a pass sees for the i-th finding (0-based); the reply names findings by it. */
export function findingId(i: number): string {
  return `F${i + 1}`;
}

/** "F3", "f3", "3" or 3 -> index 2; anything else -> null. */
export function findingIndex(id: unknown): number | null {
  const m = /^\s*f?\s*(\d+)\s*$/i.exec(String(id));
  const n = m ? Number(m[1]) : NaN;
  return Number.isInteger(n) && n > 0 ? n - 1 : null;
}

/** Findings as the pass reads them: id first, STEP-n refs, the text as the jury wrote it. */
export function renderFindings(defects: readonly Defect[], extra?: (i: number) => Record<string, unknown>): string {
  return JSON.stringify(
    defects.map((d, i) => ({
      id: findingId(i),
      ...(extra ? extra(i) : {}),
      statement_refs: d.statement_refs.map((n) => `STEP-${n}`),
      what_went_wrong: d.what_went_wrong,
      impact: d.impact,
      evidence: d.evidence,
      ...(d.correct_value ? { correct_value: d.correct_value } : {}),
    })),
    null,
    1,
  );
}

function passMessages(set: PromptSet, template: 'removal.user' | 'arbiter.user', label: string, input: TraceInput, findings: string): ChatMessage[] {
  const user = fillTemplate(set.templates[template], {
    problem_block: frameBlock(BLOCK.problem, neutralizeMarkers(input.problem)),
    trace_block: frameBlock(BLOCK.trace, renderSteps(input.steps)),
    final_block: frameBlock(BLOCK.final, neutralizeMarkers(input.final_solution?.trim() || '(no final response was given)')),
    findings_block: frameBlock(label, findings),
  });
  return [
    { role: 'system', content: set.templates['auditor.system'] },
    { role: 'user', content: user },
  ];
}

/** The removal pass: every consensus defect, to keep or drop. */
export function removalMessages(set: PromptSet, input: TraceInput, defects: readonly Defect[]): ChatMessage[] {
  return passMessages(set, 'removal.user', PASS_BLOCK.consensus, input, renderFindings(defects));
}

/** The evidence arbiter: contested findings, each with why it is contested. */
export function arbiterMessages(set: PromptSet, input: TraceInput, defects: readonly Defect[], contest: readonly string[]): ChatMessage[] {
  return passMessages(set, 'arbiter.user', PASS_BLOCK.contested, input, renderFindings(defects, (i) => ({ contest: contest[i] ?? '' })));
}

/** Framed block of the deliberation grounding checker's claim. */
export const CLAIM_BLOCK = 'CLAIM TO CHECK';

/** The grounding checker's model call over one new deliberation claim. */
export function groundingCheckMessages(set: PromptSet, input: TraceInput, claim: string, steps: string): ChatMessage[] {
  const user = fillTemplate(set.templates['grounding-check.user'], {
    problem_block: frameBlock(BLOCK.problem, neutralizeMarkers(input.problem)),
    trace_block: frameBlock(BLOCK.trace, renderSteps(input.steps)),
    steps,
    claim_block: frameBlock(CLAIM_BLOCK, neutralizeMarkers(claim)),
  });
  return [
    { role: 'system', content: set.templates['auditor.system'] },
    { role: 'user', content: user },
  ];
}
