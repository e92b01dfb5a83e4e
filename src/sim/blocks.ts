import { blockTag, closeMarker } from '../prompts/frame.js';

/** A framed block found in a prompt (see src/prompts/frame.ts). */
export interface FramedBlock {
  label: string;
  content: string;
  /** offset of the BEGIN marker and just past the END marker */
  start: number;
  end: number;
}

const OPEN = /<<<BEGIN ([^<>\n]+?) ([0-9a-f]{12})>>>\n/g;

/**
 * The verified, top-level framed blocks of a prompt, in order. Unlike a per-label search, a
 * block nested inside another one (say a well-formed PANEL FINDINGS block pasted into a trace)
 * is skipped: it is content of the outer block, not structure of the prompt.
 */
export function topLevelBlocks(prompt: string): FramedBlock[] {
  const out: FramedBlock[] = [];
  const open = new RegExp(OPEN.source, 'g');
  for (let m = open.exec(prompt); m; m = open.exec(prompt)) {
    const label = m[1]!;
    const tag = m[2]!;
    const start = m.index + m[0].length;
    const close = `\n${closeMarker(label, tag)}`;
    const endAt = prompt.indexOf(close, start);
    if (endAt < 0) continue;
    const content = prompt.slice(start, endAt);
    if (blockTag(label, content) !== tag) continue;
    const end = endAt + close.length;
    out.push({ label, content, start: m.index, end });
    open.lastIndex = end; // skip everything inside the block
  }
  return out;
}

/** label -> content of the first top-level block with that label. */
export function blockMap(prompt: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const b of topLevelBlocks(prompt)) if (!map.has(b.label)) map.set(b.label, b.content);
  return map;
}
