import type { Defect } from '../../schemas/defect.js';
import type { ChatMessage } from '../llm/types.js';
import type { Step } from '../segment/index.js';
import { frameBlock, neutralizeMarkers, renderSteps } from './frame.js';
import { fillTemplate, type PromptSet } from './templates.js';

export interface TraceInput {
  problem: string;
  steps: readonly Step[];
  final_solution?: string | undefined;
}

export const BLOCK = { problem: 'PROBLEM', trace: 'REASONING TRACE', final: 'FINAL RESPONSE', panel: 'PANEL FINDINGS' } as const;

interface BuiltPrompt {
  set: PromptSet;
  propagation: boolean;
  text: string;
}

// The consolidation prompt repeats the Phase 1 user prompt of the same record object: build it
// once (framing hashes every block) and reuse it while the record lives.
const userPrompts = new WeakMap<TraceInput, BuiltPrompt>();

/** The Phase 1 user prompt: rubric, then the framed problem, trace and final response. */
export function auditorUserPrompt(set: PromptSet, input: TraceInput, propagation: boolean): string {
  const built = userPrompts.get(input);
  if (built && built.set === set && built.propagation === propagation) return built.text;
  const text = buildUserPrompt(set, input, propagation);
  userPrompts.set(input, { set, propagation, text });
  return text;
}

function buildUserPrompt(set: PromptSet, input: TraceInput, propagation: boolean): string {
  return fillTemplate(set.templates['auditor.user'], {
    propagation_rule: propagation ? set.templates['auditor.propagation'] : '',
    problem_block: frameBlock(BLOCK.problem, neutralizeMarkers(input.problem)),
    trace_block: frameBlock(BLOCK.trace, renderSteps(input.steps)),
    final_block: frameBlock(BLOCK.final, neutralizeMarkers(input.final_solution?.trim() || '(no final response was given)')),
  });
}

export function phase1Messages(set: PromptSet, input: TraceInput, propagation: boolean): ChatMessage[] {
  return [
    { role: 'system', content: set.templates['auditor.system'] },
    { role: 'user', content: auditorUserPrompt(set, input, propagation) },
  ];
}

/** A defect as a juror would have written it (STEP-n strings), for the consolidator's panel block. */
function asModelDefect(d: Defect): Record<string, unknown> {
  const out: Record<string, unknown> = {
    statement_refs: d.statement_refs.map((n) => `STEP-${n}`),
    what_went_wrong: d.what_went_wrong,
    impact: d.impact,
    evidence: d.evidence,
  };
  if (d.correct_value) out.correct_value = d.correct_value;
  return out;
}

export interface PanelEntry {
  juror_id: string;
  defects: readonly Defect[];
}

/** Panel findings as one JSON object keyed by auditor id; the order is the jurors' configured order. */
export function renderPanel(panel: readonly PanelEntry[]): string {
  const obj: Record<string, unknown> = {};
  for (const p of panel) obj[p.juror_id] = { negatives: p.defects.map(asModelDefect) };
  return JSON.stringify(obj, null, 1);
}

/**
 * Consolidation = the Phase 1 prompt verbatim + the addendum (App. C.1). Sharing the Phase 1
 * prefix lets a prefix-caching server reuse the jurors' prompt.
 */
export function consolidationMessages(set: PromptSet, input: TraceInput, propagation: boolean, panel: readonly PanelEntry[]): ChatMessage[] {
  const addendum = fillTemplate(set.templates['consolidation.addendum'], {
    jury_count: String(panel.length),
    panel_block: frameBlock(BLOCK.panel, renderPanel(panel)),
  });
  return [
    { role: 'system', content: set.templates['auditor.system'] },
    { role: 'user', content: auditorUserPrompt(set, input, propagation) + addendum },
  ];
}
