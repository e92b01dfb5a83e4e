import type { TranscriptTurn } from '../../../schemas/verdict.js';
import type { ChatMessage } from '../../llm/types.js';
import { auditorUserPrompt, renderPanel, type PanelEntry, type TraceInput } from '../../prompts/build.js';
import { frameBlock } from '../../prompts/frame.js';
import { fillTemplate, type PromptSet } from '../../prompts/templates.js';
import { AGREE_ALL, NOTHING_NEW } from '../../prompts/deliberation-wire.js';
import { DELIB_BLOCK, listIds, type TurnRenderer } from './render.js';

/**
 * Deliberation prompts, ordered for prefix caching (vLLM / SGLang): what is the same for every
 * call of a record comes first, what changes comes last.
 * - Juror turns open with the Phase 1 user prompt itself, byte for byte up to the end of the
 *   FINAL RESPONSE block (rubric, problem, step-marked trace), then the fixed rules, the opening
 *   statements, the turns (append-only), and only then the juror id and the instruction.
 * - The moderator sees the openings, then its journal (turns interleaved with the changes its
 *   decisions made to the consensus state, append-only: journal.ts), then the status. The final
 *   extraction is a call to the moderator (§2.2.2): same system prompt, same openings and
 *   journal first, so it reuses the prefix of the last decision.
 * - The moderator and extraction never receive the problem, trace or final response (§2.2.2).
 */

const FINAL_END = /<<<END FINAL RESPONSE [0-9a-f]{12}>>>/g;

/**
 * The Phase 1 user prompt up to and including the FINAL RESPONSE block: the part of every juror
 * turn that a prefix cache already holds from Phase 1. The last END marker is the real one: any
 * look-alike inside the problem or trace comes before it, and our template text after the
 * input contains none.
 */
export function sharedAuditPart(set: PromptSet, input: TraceInput, propagation: boolean): string {
  const full = auditorUserPrompt(set, input, propagation);
  let end = -1;
  for (const m of full.matchAll(FINAL_END)) end = m.index + m[0].length;
  if (end < 0) throw new Error('auditor.user must contain the FINAL RESPONSE block ({{final_block}})');
  return full.slice(0, end) + '\n';
}

/** Per-record material every juror turn shares. */
export interface TurnContext {
  set: PromptSet;
  shared: string;
  openings: string;
  /** the settled-findings section (adaptive mode), or '' */
  settled: string;
  turns: TurnRenderer;
}

export function settledSection(set: PromptSet, settled: readonly PanelEntry[]): string {
  if (settled.length === 0) return '';
  return fillTemplate(set.templates['juror-turn.settled'], { settled_block: frameBlock(DELIB_BLOCK.settled, renderPanel(settled)) });
}

export function jurorTurnMessages(c: TurnContext, transcript: readonly TranscriptTurn[], jurorId: string, instruction: string): ChatMessage[] {
  const tail = fillTemplate(c.set.templates['juror-turn.user'], {
    nothing_new: NOTHING_NEW,
    agree_all: AGREE_ALL,
    settled: c.settled,
    openings: c.openings,
    turns: c.turns.all(transcript),
    juror_id: jurorId,
    instruction_block: frameBlock(DELIB_BLOCK.instruction, instruction),
  });
  return [
    // The Phase 1 system prompt: with it, a juror turn shares the Phase 1 prompt from its very first token.
    { role: 'system', content: c.set.templates['auditor.system'] },
    { role: 'user', content: c.shared + tail },
  ];
}

export interface ModeratorStatus {
  totalTurns: number;
  maxTurns: number;
  round: number;
  roundsCompleted: number;
  heard: readonly string[];
  notHeard: readonly string[];
  panelists: readonly string[];
  removed: readonly string[];
  hiddenTurns: number;
}

function transcript(set: PromptSet, openings: string, journal: string): string {
  return fillTemplate(set.templates['moderator.transcript'], { openings, journal });
}

/** `journal`: the moderator's window of its journal (Journal.moderatorView). */
export function moderatorMessages(set: PromptSet, openings: string, journal: string, s: ModeratorStatus): ChatMessage[] {
  const user = fillTemplate(set.templates['moderator.user'], {
    transcript: transcript(set, openings, journal),
    total_turns: String(s.totalTurns),
    max_turns: String(s.maxTurns),
    logical_round: String(s.round),
    rounds_completed: String(s.roundsCompleted),
    heard: listIds(s.heard),
    not_heard: listIds(s.notHeard),
    panelists: listIds(s.panelists),
    removed: listIds(s.removed),
    hidden_turns: String(s.hiddenTurns),
  });
  return [
    { role: 'system', content: set.templates['moderator.system'] },
    { role: 'user', content: user },
  ];
}

export interface ExtractionFacts {
  /** the jurors that completed Phase 1 (their findings are the opening statements) */
  panel: readonly string[];
  majority: number;
  removed: readonly string[];
  termination: string;
  rounds: number;
}

/** Facts about how the deliberation went, framed like the rest so the extraction cannot miss them. */
function outcomeBlock(f: ExtractionFacts): string {
  const lines = [
    `- Panelists who completed their independent audit: ${f.panel.length} (${listIds(f.panel)})`,
    `- Majority needed for consensus: ${f.majority} of ${f.panel.length}`,
    `- Removed from the discussion after repeated failures: ${listIds(f.removed)}`,
    `- Termination reason: ${f.termination}`,
    `- Logical rounds: ${f.rounds}`,
  ];
  return frameBlock(DELIB_BLOCK.outcome, lines.join('\n'));
}

/** `journal`: the whole journal, final state changes included (Journal.fullView). */
export function extractionMessages(set: PromptSet, openings: string, journal: string, f: ExtractionFacts): ChatMessage[] {
  const user = fillTemplate(set.templates['extraction.user'], {
    transcript: transcript(set, openings, journal),
    outcome_block: outcomeBlock(f),
  });
  return [
    { role: 'system', content: set.templates['moderator.system'] },
    { role: 'user', content: user },
  ];
}
