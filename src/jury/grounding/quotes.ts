import { parseStepRef } from '../../../schemas/defect.js';

/**
 * The quotes of a defect's `evidence`. The prompts ask for the trace's own words in quotation
 * marks, optionally after the step they come from ("[STEP-3] 'x = 5'; [STEP-4] '…'"). The
 * evidence is cut at its step markers; a piece wholly wrapped in one pair of quotation marks
 * ('…', "…", “…”, ‘…’, `…`) is one quote, whatever it holds (primes, apostrophes, newlines).
 * Otherwise each quoted span in the piece is one quote, where a single quote mark counts only
 * at a word boundary so apostrophes ("it's") neither open nor close one; a piece with no quoted
 * span is one quote: its text.
 */

export interface Quote {
  text: string;
  /** the step the evidence names for it ("[STEP-3] '…'"), when it names one */
  step: number | null;
}

const SPAN = /(?<![\p{L}\p{N}])'([\s\S]+?)'(?![\p{L}\p{N}])|"([^"]+)"|\u201c([^\u201d]+)\u201d|\u2018([\s\S]+?)\u2019(?![\p{L}\p{N}])|`([^`]+)`/gu;
const STEP_MARK = /\[?\s*step[\s_-]*(\d+)\s*\]?\s*:?/gi;
const PAIRS: ReadonlyArray<[string, string]> = [["'", "'"], ['"', '"'], ['\u201c', '\u201d'], ['\u2018', '\u2019'], ['`', '`']];

function piece(raw: string, step: number | null): Quote[] {
  const text = raw.trim().replace(/^[;,.\s]+|[;,.\s]+$/g, '');
  if (!text) return [];
  for (const [open, close] of PAIRS) {
    if (text.length > 2 && text.startsWith(open) && text.endsWith(close)) {
      const inner = text.slice(open.length, -close.length).trim();
      return inner ? [{ text: inner, step }] : [];
    }
  }
  const spans = [...text.matchAll(SPAN)].map((m) => (m[1] ?? m[2] ?? m[3] ?? m[4] ?? m[5] ?? '').trim()).filter(Boolean);
  return (spans.length > 0 ? spans : [text]).map((t) => ({ text: t, step }));
}

export function quotesOf(evidence: string): Quote[] {
  const marks = [...evidence.matchAll(STEP_MARK)];
  if (marks.length === 0) return piece(evidence, null);
  const out = piece(evidence.slice(0, marks[0]!.index), null);
  marks.forEach((m, i) => {
    const end = i + 1 < marks.length ? marks[i + 1]!.index : evidence.length;
    out.push(...piece(evidence.slice(m.index + m[0].length, end), parseStepRef(m[1])));
  });
  return out;
}

/** Only the quoted spans of a text (prose such as a deliberation turn: no span, no quote). */
export function quotedSpans(text: string): string[] {
  return [...text.matchAll(SPAN)].map((m) => (m[1] ?? m[2] ?? m[3] ?? m[4] ?? m[5] ?? '').trim()).filter(Boolean);
}
