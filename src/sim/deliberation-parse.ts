import { IMPACTS, parseStepRef, type Impact } from '../../schemas/defect.js';
import { AGREE_ALL, DELIB_BLOCK, NOTHING_NEW, saysAgreeAll, saysNothingNew } from '../prompts/deliberation-wire.js';
import { topLevelBlocks, type FramedBlock } from './blocks.js';

/**
 * What the simulated moderator, jurors and extraction read out of a deliberation prompt, and
 * the small fixed grammar simulated jurors speak in ("I agree with jury-1 on [STEP-4]: ...").
 * Real models write free prose; the simulator only has to understand its own jurors.
 */

export interface Finding {
  juror: string;
  steps: number[];
  impact: Impact;
  wording: string;
  evidence: string;
  correct_value?: string;
}

export interface SimTurn {
  turn: number;
  round: number;
  speaker: string;
  message: string;
}

export function promptText(messages: ReadonlyArray<{ content: string }>): string {
  return messages.map((m) => m.content).join('\n');
}

export function blocksOf(prompt: string, label: string): FramedBlock[] {
  return topLevelBlocks(prompt).filter((b) => b.label === label);
}

/** `{ juror_id: { negatives: [...] } }` blocks (openings, Phase 1 judgements) -> findings. */
export function parseFindings(contents: readonly string[]): { jurors: string[]; findings: Finding[] } {
  const jurors: string[] = [];
  const findings: Finding[] = [];
  for (const content of contents) {
    let obj: unknown;
    try {
      obj = JSON.parse(content);
    } catch {
      continue;
    }
    if (!obj || typeof obj !== 'object') continue;
    for (const [juror, entry] of Object.entries(obj as Record<string, unknown>)) {
      jurors.push(juror);
      const negs = (entry as { negatives?: unknown })?.negatives;
      if (!Array.isArray(negs)) continue;
      for (const d of negs as Array<Record<string, unknown>>) {
        const refs = Array.isArray(d.statement_refs) ? d.statement_refs.map(parseStepRef).filter((n): n is number => n !== null) : [];
        if (refs.length === 0) continue;
        const impact = (IMPACTS as readonly string[]).includes(String(d.impact)) ? (d.impact as Impact) : 'major';
        findings.push({
          juror,
          steps: [...new Set(refs)].sort((a, b) => a - b),
          impact,
          wording: String(d.what_went_wrong ?? ''),
          evidence: String(d.evidence ?? ''),
          ...(typeof d.correct_value === 'string' ? { correct_value: d.correct_value } : {}),
        });
      }
    }
  }
  return { jurors, findings };
}

const HEADER = /### Turn (\d+), round (\d+): ([^\n]+)\n$/;

/** Turns in prompt order; the header line just above each block names turn, round and speaker. */
export function parseTurns(prompt: string): SimTurn[] {
  const out: SimTurn[] = [];
  for (const b of blocksOf(prompt, DELIB_BLOCK.turn)) {
    const before = prompt.slice(Math.max(0, b.start - 300), b.start);
    const m = HEADER.exec(before.slice(before.lastIndexOf('###')));
    if (m) out.push({ turn: Number(m[1]), round: Number(m[2]), speaker: m[3]!, message: b.content });
  }
  return out;
}

/** "- Label: a, b" from a status list; `(none)` is the empty list. */
export function statusList(prompt: string, label: string): string[] {
  const v = statusValue(prompt, label);
  return v === null || v === '(none)' ? [] : v.split(',').map((s) => s.trim()).filter(Boolean);
}

export function statusValue(prompt: string, label: string): string | null {
  const lines = prompt.split('\n').filter((l) => l.startsWith(`- ${label}: `));
  const last = lines[lines.length - 1];
  return last === undefined ? null : last.slice(label.length + 4).trim();
}

// ---- the jurors' grammar ------------------------------------------------------------------

export type Act =
  | { kind: 'endorse'; step: number; who: string[] }
  | { kind: 'contest'; step: number; who: string[] }
  | { kind: 'concede'; step: number }
  | { kind: 'maintain'; step: number }
  | { kind: 'raise'; step: number; impact: Impact; wording: string }
  | { kind: 'nothing_new' }
  | { kind: 'agree_all' };

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();
const names = (who: readonly string[]) => (who.length ? who.join(' and ') : 'the panel');

export function renderAct(a: Act, body: string): string {
  switch (a.kind) {
    case 'endorse':
      return `I agree with ${names(a.who)} on [STEP-${a.step}]: ${oneLine(body)}`;
    case 'contest':
      return `I disagree with ${names(a.who)} on [STEP-${a.step}]: ${oneLine(body)}`;
    case 'concede':
      return `I concede [STEP-${a.step}]: ${oneLine(body)}`;
    case 'maintain':
      return `I maintain my finding on [STEP-${a.step}]: ${oneLine(body)}`;
    case 'raise':
      return `New defect on [STEP-${a.step}] (${a.impact}): ${oneLine(a.wording)}`;
    case 'nothing_new':
      return NOTHING_NEW;
    case 'agree_all':
      return AGREE_ALL;
  }
}

export function parseActs(message: string): Act[] {
  if (saysAgreeAll(message)) return [{ kind: 'agree_all' }];
  if (saysNothingNew(message)) return [{ kind: 'nothing_new' }];
  const acts: Act[] = [];
  for (const line of message.split('\n')) {
    let m: RegExpExecArray | null;
    if ((m = /^I agree with (.+?) on \[STEP-(\d+)\]:/.exec(line))) acts.push({ kind: 'endorse', step: Number(m[2]), who: m[1]!.split(' and ') });
    else if ((m = /^I disagree with (.+?) on \[STEP-(\d+)\]:/.exec(line))) acts.push({ kind: 'contest', step: Number(m[2]), who: m[1]!.split(' and ') });
    else if ((m = /^I concede \[STEP-(\d+)\]:/.exec(line))) acts.push({ kind: 'concede', step: Number(m[1]) });
    else if ((m = /^I maintain my finding on \[STEP-(\d+)\]:/.exec(line))) acts.push({ kind: 'maintain', step: Number(m[1]) });
    else if ((m = /^New defect on \[STEP-(\d+)\] \((neutral|minor|major|fatal)\): (.*)$/.exec(line))) acts.push({ kind: 'raise', step: Number(m[1]), impact: m[2] as Impact, wording: m[3]! });
  }
  return acts;
}

export const SUBSTANTIVE: ReadonlySet<Act['kind']> = new Set(['endorse', 'contest', 'concede', 'raise']);
