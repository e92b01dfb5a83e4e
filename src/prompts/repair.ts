import { createHash } from 'node:crypto';
import type { RepairAnswerConfig } from '../../schemas/config.js';
import type { Defect } from '../../schemas/defect.js';
import type { RepairCondition } from '../../schemas/repair.js';
import type { ChatMessage } from '../llm/types.js';
import { BLOCK, type TraceInput } from './build.js';
import { frameBlock, neutralizeMarkers, renderSteps } from './frame.js';
import { fillTemplate, type PromptSet } from './templates.js';

/**
 * The defect-guided retry prompt (paper App. N.2): the problem, the earlier trace with its
 * [STEP-k] marks, a findings block, the instruction to re-solve from scratch, and the answer
 * contract. The two conditions share every word but the findings block and its intro, and each
 * has its own block label, which is how the simulator tells them apart.
 */
export const REPAIR_BLOCK = { steps: 'FLAGGED STEPS', full: 'REVIEW FINDINGS' } as const satisfies Record<RepairCondition, string>;

/** Findings a retry may see: never a neutral one (App. N.1: it names no actionable error). */
export function actionable(defects: readonly Defect[]): Defect[] {
  return defects.filter((d) => d.impact !== 'neutral');
}

/** `steps`: each cited step once, ascending, one `- [STEP-k]` line each. */
export function stepsFindings(defects: readonly Defect[]): string {
  const refs = [...new Set(actionable(defects).flatMap((d) => d.statement_refs))].sort((a, b) => a - b);
  return refs.map((n) => `- [STEP-${n}]`).join('\n');
}

/** `full`: each non-neutral finding with its cited steps, severity and what went wrong, in verdict order. */
export function fullFindings(defects: readonly Defect[]): string {
  return actionable(defects)
    .map((d) => `- ${d.statement_refs.map((n) => `[STEP-${n}]`).join(' ')} -- ${d.impact.toUpperCase()}\n  ${neutralizeMarkers(d.what_went_wrong).replace(/\s*\n\s*/g, ' ')}`)
    .join('\n');
}

/** The last line the generator is told to write. */
export function answerContract(a: RepairAnswerConfig): string {
  if (a.kind === 'integer') return 'ANSWER: <integer>';
  if (a.kind === 'choice') return `ANSWER: <one of ${a.choices!.join(', ')}>`;
  return 'ANSWER: <your final answer, on this one line>';
}

export function repairMessages(set: PromptSet, input: TraceInput, defects: readonly Defect[], condition: RepairCondition, answer: RepairAnswerConfig): ChatMessage[] {
  const findings = condition === 'steps' ? stepsFindings(defects) : fullFindings(defects);
  const user = fillTemplate(set.templates['repair.user'], {
    problem_block: frameBlock(BLOCK.problem, neutralizeMarkers(input.problem)),
    trace_block: frameBlock(BLOCK.trace, renderSteps(input.steps)),
    findings_intro: set.templates[condition === 'steps' ? 'repair.steps' : 'repair.full'].trim(),
    findings_block: frameBlock(REPAIR_BLOCK[condition], findings),
    answer_contract: answerContract(answer),
  });
  return [
    { role: 'system', content: set.templates['repair.system'] },
    { role: 'user', content: user },
  ];
}

/** Hash of what shapes a condition's prompt besides the record: its templates and the answer contract. */
export function repairPromptHash(set: PromptSet, condition: RepairCondition, answer: RepairAnswerConfig): string {
  const h = createHash('sha256');
  for (const name of ['repair.system', 'repair.user', condition === 'steps' ? 'repair.steps' : 'repair.full'] as const) h.update(name).update('\0').update(set.templates[name]).update('\0');
  h.update(condition).update('\0').update(answerContract(answer));
  return h.digest('hex').slice(0, 16);
}
