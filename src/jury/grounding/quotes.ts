import { parseStepRef } from '../../../schemas/defect.js';

/**
 * The quotes of a defect's `evidence`. The prompts ask for the trace's own words in quotation
 * marks, optionally after the step they come from ("[STEP-3] 'x = 5'"). Each quoted span
 * ('…', "…", “…”, ‘…’, `…`) is one quote, with the step named just before it, if any; a single
 * quote mark counts only at a word boundary, so apostrophes ("it's") do not open or close one.
 * Evidence with no quoted span is one quote: its text without step markers.
 */

export interface Quote {
  text: string;
  /** the step the evidence names for it ("[STEP-3] '…'"), when it names one */
  step: number | null;
}

const SPAN = /(?<![\p{L}\p{N}])'(.+?)'(?![\p{L}\p{N}])|"([^"]+)"|\u201c([^\u201d]+)\u201d|\u2018(.+?)\u2019(?![\p{L}\p{N}])|`([^`]+)`/gu;
const STEP_MARK = /\[?\s*step[\s_-]*(\d+)\s*\]?\s*:?\s*$/i;
const STEP_MARKS = /\[?\s*step[\s_-]*\d+\s*\]?\s*:?/gi;

export function quotesOf(evidence: string): Quote[] {
  const out: Quote[] = [];
  let last = 0;
  for (const m of evidence.matchAll(SPAN)) {
    const text = (m[1] ?? m[2] ?? m[3] ?? m[4] ?? m[5] ?? '').trim();
    const before = evidence.slice(last, m.index);
    last = m.index + m[0].length;
    const mark = STEP_MARK.exec(before);
    if (text) out.push({ text, step: mark ? parseStepRef(mark[1]) : null });
  }
  if (out.length > 0) return out;
  const rest = evidence.replace(STEP_MARKS, ' ').trim();
  return rest ? [{ text: rest, step: null }] : [];
}
