import { ReasoningJuryError } from '../util/errors.js';
/**
 * Trace -> numbered steps. The paper's rule (§2.1): a boundary is an end-of-sentence character
 * followed by a blank line, which keeps code blocks and multi-line derivations together.
 * Steps a record already carries (benchmark gold boundaries) pass through untouched.
 */

export type SegmentationMode = 'auto' | 'regex' | 'blank_line' | 'given';

export interface Step {
  /** 1-based, as prompts cite it: [STEP-1] */
  index: number;
  text: string;
}

/** (?<=[.!?])\s*\n\s*\n+ from §2.1. */
const SENTENCE_END_BLANK_LINE = /(?<=[.!?])\s*\n\s*\n+/;
const BLANK_LINE = /\n\s*\n+/;

export class SegmentationError extends ReasoningJuryError {
  override get kind() {
    return 'input' as const;
  }
}

function split(text: string, boundary: RegExp): string[] {
  return text
    .replace(/\r\n?/g, '\n')
    .split(boundary)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

export function segmentText(text: string, mode: 'regex' | 'blank_line'): string[] {
  return split(text, mode === 'regex' ? SENTENCE_END_BLANK_LINE : BLANK_LINE);
}

/**
 * Steps for one record. Given steps keep their positions (gold labels index them), even when
 * one is empty; text is only segmented when the record has no steps of its own.
 */
export function segmentRecord(rec: { trace?: string | undefined; steps?: string[] | undefined }, mode: SegmentationMode = 'auto'): Step[] {
  let texts: string[];
  if (mode === 'given' || (mode === 'auto' && rec.steps && rec.steps.length > 0)) {
    if (!rec.steps || rec.steps.length === 0) throw new SegmentationError('segmentation mode "given" but the record has no steps');
    texts = rec.steps;
  } else {
    if (!rec.trace) throw new SegmentationError('record has no trace text to segment');
    texts = segmentText(rec.trace, mode === 'blank_line' ? 'blank_line' : 'regex');
  }
  if (texts.length === 0) throw new SegmentationError('trace produced no steps');
  return texts.map((text, i) => ({ index: i + 1, text }));
}

/**
 * The step cap (`segmentation.max_steps`): the dead-letter reason when `steps` exceeds it, else
 * null. Record mapping checks a record's own steps list with it and segmentation the steps it
 * produced, so a record over the cap reads the same wherever it is caught.
 */
export function stepCapReason(steps: number, maxSteps: number): string | null {
  return steps > maxSteps ? `segmentation: ${steps} steps, over the limit of ${maxSteps} (segmentation.max_steps)` : null;
}

export function stepMarker(index: number): string {
  return `[STEP-${index}]`;
}
