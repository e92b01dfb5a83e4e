import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { TraceRecord, type GoldLabels } from '../../schemas/trace.js';
import { neutralizeMarkers, renderSteps } from '../prompts/frame.js';
import { segmentRecord, type SegmentationMode } from '../segment/index.js';

/**
 * Gold labels for the simulator, found again from a prompt. A record is indexed by a hash of
 * its PROBLEM and REASONING TRACE block contents, computed with the very functions the prompt
 * builder frames them with (neutralizeMarkers, renderSteps), so the key taken from a prompt's
 * unframed blocks matches the key taken from the record.
 */

export interface GoldEntry {
  id: string;
  n_steps: number;
  /** 1-based gold-error steps inside 1..n_steps, ascending; empty = a clean trace */
  error_steps: number[];
  /** the record's reference final answer, when it has one (the generator of repair grades against it) */
  reference_answer?: string;
}

export interface GoldIndex {
  readonly size: number;
  /** records the loader could not use: line (1-based) and why */
  readonly skipped: ReadonlyArray<{ line: number; reason: string }>;
  lookup(problemBlock: string | null, traceBlock: string): GoldEntry | null;
}

export function goldKey(problemBlock: string, traceBlock: string): string {
  return createHash('sha256').update(problemBlock).update('\0').update(traceBlock).digest('hex');
}

function traceKey(traceBlock: string): string {
  return createHash('sha256').update('trace-only\0').update(traceBlock).digest('hex');
}

/** Block contents exactly as phase1Messages frames them for this record. */
export function recordBlocks(rec: Pick<TraceRecord, 'problem' | 'trace' | 'steps'>, mode: SegmentationMode = 'auto'): { problem: string; trace: string; n_steps: number } {
  const steps = segmentRecord(rec, mode);
  return { problem: neutralizeMarkers(rec.problem), trace: renderSteps(steps), n_steps: steps.length };
}

/** error_steps when given; otherwise the first error step alone (later steps are unlabelled). */
export function goldErrorSteps(gold: GoldLabels | undefined, nSteps: number): number[] {
  if (!gold) return [];
  const raw = gold.error_steps ?? (gold.first_error_step ? [gold.first_error_step] : []);
  return [...new Set(raw)].filter((s) => s >= 1 && s <= nSteps).sort((a, b) => a - b);
}

export interface GoldOptions {
  /** must match the pipeline's segmentation mode (default auto, as in the config) */
  mode?: SegmentationMode;
}

export function buildGoldIndex(records: Iterable<unknown>, opts: GoldOptions = {}): GoldIndex {
  const exact = new Map<string, GoldEntry>();
  // Fallback when the problem text reaches the prompt altered: the trace alone, if unambiguous.
  const byTrace = new Map<string, GoldEntry | null>();
  const skipped: Array<{ line: number; reason: string }> = [];
  let line = 0;
  for (const raw of records) {
    line++;
    const parsed = TraceRecord.safeParse(raw);
    if (!parsed.success) {
      skipped.push({ line, reason: z.prettifyError(parsed.error).replace(/\s+/g, ' ') });
      continue;
    }
    const rec = parsed.data;
    let blocks: ReturnType<typeof recordBlocks>;
    try {
      blocks = recordBlocks(rec, opts.mode);
    } catch (e) {
      skipped.push({ line, reason: (e as Error).message });
      continue;
    }
    const reference = rec.reference_answer ?? goldReference(raw);
    const entry: GoldEntry = { id: rec.id, n_steps: blocks.n_steps, error_steps: goldErrorSteps(rec.gold, blocks.n_steps), ...(reference !== undefined ? { reference_answer: reference } : {}) };
    const key = goldKey(blocks.problem, blocks.trace);
    if (!exact.has(key)) exact.set(key, entry);
    const tk = traceKey(blocks.trace);
    const prev = byTrace.get(tk);
    if (prev === undefined) byTrace.set(tk, entry);
    else if (prev && prev.error_steps.join(',') !== entry.error_steps.join(',')) byTrace.set(tk, null);
  }
  return {
    size: exact.size,
    skipped,
    lookup(problemBlock, traceBlock) {
      if (problemBlock !== null) {
        const hit = exact.get(goldKey(problemBlock, traceBlock));
        if (hit) return hit;
      }
      return byTrace.get(traceKey(traceBlock)) ?? null;
    },
  };
}

/**
 * A gold file has no input mapping, so a reference answer kept with the other labels
 * (`gold.reference_answer`, as benchmark exports do) is read from there too; numbers as text.
 */
function goldReference(raw: unknown): string | undefined {
  const v = (raw as { gold?: { reference_answer?: unknown } } | null)?.gold?.reference_answer;
  return typeof v === 'string' ? v : typeof v === 'number' && Number.isFinite(v) ? String(v) : undefined;
}

/** Parse a JSONL file of TraceRecords; unparsable lines are skipped and listed, not fatal. */
export function loadGoldFile(path: string, opts: GoldOptions = {}): GoldIndex {
  const lines = readFileSync(path, 'utf8').split('\n');
  const rows: unknown[] = [];
  const badJson: Array<{ line: number; reason: string }> = [];
  const lineOf: number[] = [];
  lines.forEach((text, i) => {
    if (text.trim() === '') return;
    try {
      rows.push(JSON.parse(text));
      lineOf.push(i + 1);
    } catch (e) {
      badJson.push({ line: i + 1, reason: `invalid JSON: ${(e as Error).message}` });
    }
  });
  const index = buildGoldIndex(rows, opts);
  // buildGoldIndex numbers rows 1..n; map them back to file lines.
  const skipped = [...badJson, ...index.skipped.map((s) => ({ line: lineOf[s.line - 1] ?? s.line, reason: s.reason }))].sort((a, b) => a.line - b.line);
  return { size: index.size, skipped, lookup: (p, t) => index.lookup(p, t) };
}

/** An empty index: every trace is clean, so only false positives can fire. */
export const NO_GOLD: GoldIndex = { size: 0, skipped: [], lookup: () => null };
