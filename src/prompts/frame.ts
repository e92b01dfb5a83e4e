import { createHash } from 'node:crypto';
import type { Step } from '../segment/index.js';

/**
 * Untrusted text (problem, trace, panel findings, transcripts) is put between delimiters that
 * carry a tag derived from the content's own hash. Text cannot contain its own hash, so it can
 * never close its block early, and the prompt tells the model only tagged markers count.
 * The tag is deterministic, so identical inputs give identical prompts (cache and prefix reuse).
 */

export function blockTag(label: string, content: string): string {
  return createHash('sha256').update(label).update('\0').update(content).digest('hex').slice(0, 12);
}

/** Our own step markers are upper-case; a look-alike inside the text is lower-cased so it cannot pose as one. */
export function neutralizeMarkers(text: string): string {
  return text.replace(/\[STEP-(\d+)\]/g, '[step-$1]');
}

export function openMarker(label: string, tag: string): string {
  return `<<<BEGIN ${label} ${tag}>>>`;
}
export function closeMarker(label: string, tag: string): string {
  return `<<<END ${label} ${tag}>>>`;
}

export function frameBlock(label: string, content: string): string {
  const tag = blockTag(label, content);
  return `${openMarker(label, tag)}\n${content}\n${closeMarker(label, tag)}`;
}

/** The trace as jurors see it: "[STEP-1] ...\n\n[STEP-2] ..." */
export function renderSteps(steps: readonly Step[]): string {
  return steps.map((s) => `[STEP-${s.index}] ${neutralizeMarkers(s.text)}`).join('\n\n');
}

/**
 * Inverse of frameBlock, for the simulator and tests: returns the content of the first block
 * with this label whose close marker carries the matching tag, or null.
 */
export function unframeBlock(prompt: string, label: string): string | null {
  const open = new RegExp(`<<<BEGIN ${label} ([0-9a-f]{12})>>>\\n`, 'g');
  for (let m = open.exec(prompt); m; m = open.exec(prompt)) {
    const tag = m[1]!;
    const start = m.index + m[0].length;
    const end = prompt.indexOf(`\n${closeMarker(label, tag)}`, start);
    if (end < 0) continue;
    const content = prompt.slice(start, end);
    if (blockTag(label, content) === tag) return content;
  }
  return null;
}

/** Split a rendered trace back into step texts (index order). */
export function parseRenderedSteps(rendered: string): string[] {
  const parts = rendered.split(/(?:^|\n\n)\[STEP-(\d+)\] /);
  const steps: string[] = [];
  for (let i = 1; i < parts.length; i += 2) steps.push(parts[i + 1] ?? '');
  return steps;
}
