/**
 * Getting one JSON object out of a model reply. Models wrap JSON in markdown fences, surround
 * it with prose, think aloud in <think> tags, or emit almost-JSON (trailing commas, single
 * quotes, a truncated tail). We try the cheap exact readings first and repair only as a last
 * resort, then validate with the caller's zod schema.
 */
import { jsonrepair } from 'jsonrepair';
import { z, type ZodType } from 'zod';

export type JsonExtraction = { ok: true; value: unknown; repaired: boolean } | { ok: false; error: string };
export type Structured<T> = { ok: true; value: T; repaired: boolean } | { ok: false; error: string };

/** Error strings go back to the model in a re-ask and into verdicts: keep them short. */
export const MAX_ERROR_CHARS = 800;
// A reply full of LaTeX braces could make the candidate scan quadratic; this bounds it.
const MAX_SCAN_STARTS = 200;

const THINK = /<think(?:ing)?>[\s\S]*?<\/think(?:ing)?>/gi;
// Every THINK match ends with a closing tag; without one, stripping them changes nothing.
const THINK_CLOSE = /<\/think/i;
const FENCE = /```[ \t]*([A-Za-z0-9_-]*)[^\n]*\n([\s\S]*?)```/g;

/** Candidate JSON texts in the order we trust them. */
function candidates(text: string): string[] {
  const out: string[] = [];
  const body = text.replace(THINK, '').trim();
  for (const m of body.matchAll(FENCE)) {
    const lang = (m[1] ?? '').toLowerCase();
    if (lang === '' || lang === 'json' || lang === 'json5' || lang === 'jsonc') out.push(m[2]!.trim());
  }
  out.push(body);
  out.push(...balancedSpans(body));
  return [...new Set(out.filter((s) => s.length > 0))];
}

/**
 * Every top-level {...} or [...] span whose brackets balance, ignoring brackets inside JSON
 * strings. When a start never closes we move to the next opening bracket instead of giving up,
 * so a stray "{" in prose does not hide the real object after it.
 */
export function balancedSpans(text: string): string[] {
  const spans: string[] = [];
  let starts = 0;
  let i = 0;
  while (i < text.length && starts < MAX_SCAN_STARTS) {
    const c = text[i];
    if (c !== '{' && c !== '[') {
      i++;
      continue;
    }
    starts++;
    const end = scanBalanced(text, i);
    if (end < 0) {
      i++;
      continue;
    }
    spans.push(text.slice(i, end + 1));
    i = end + 1;
  }
  // Objects first: a bare [1] in prose is rarely the answer.
  return [...spans.filter((s) => s[0] === '{'), ...spans.filter((s) => s[0] === '[')];
}

/** Index of the bracket closing the one at `start`, or -1. */
function scanBalanced(text: string, start: number): number {
  const stack: string[] = [];
  let inString = false;
  let escaped = false;
  for (let j = start; j < text.length; j++) {
    const c = text[j];
    if (inString) {
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{') stack.push('}');
    else if (c === '[') stack.push(']');
    else if (c === '}' || c === ']') {
      if (stack.pop() !== c) return -1;
      if (stack.length === 0) return j;
    }
  }
  return -1;
}

function tryParse(s: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(s) };
  } catch {
    return { ok: false };
  }
}

function isContainer(v: unknown): boolean {
  return v !== null && typeof v === 'object';
}

/** Texts worth handing to jsonrepair: fenced bodies, or from the first "{" to the end (truncated replies). */
function repairInputs(text: string): string[] {
  const body = text.replace(THINK, '').trim();
  const out: string[] = [];
  for (const m of body.matchAll(FENCE)) out.push(m[2]!.trim());
  // An unterminated fence (reply cut off by max_tokens).
  const open = /```[ \t]*(?:json)?[^\n]*\n([\s\S]*)$/i.exec(body);
  if (open && !open[1]!.includes('```')) out.push(open[1]!.trim());
  const first = body.search(/[{[]/);
  if (first >= 0) {
    const last = Math.max(body.lastIndexOf('}'), body.lastIndexOf(']'));
    if (last > first) out.push(body.slice(first, last + 1));
    out.push(body.slice(first));
  }
  return [...new Set(out.filter((s) => s.length > 0))];
}

/** All JSON values we can read from `text`, exact parses first, then repairs. */
function* readings(text: string): Generator<{ value: unknown; repaired: boolean }> {
  for (const c of candidates(text)) {
    const p = tryParse(c);
    if (p.ok && isContainer(p.value)) yield { value: p.value, repaired: false };
  }
  for (const c of repairInputs(text)) {
    let fixed: string;
    try {
      fixed = jsonrepair(c);
    } catch {
      continue;
    }
    const p = tryParse(fixed);
    if (p.ok && isContainer(p.value)) yield { value: p.value, repaired: true };
  }
}

/**
 * The reply parsed as it is, when it is one JSON object or array and has no think block: then it
 * is exactly the first reading `readings` yields. No fence can come before it: in valid JSON a
 * fence opens inside a string, its body starts after a raw newline (outside any string) and stops
 * inside the string holding the closing fence, so the body never parses. And trim() removes just
 * the JSON whitespace around the value. Most replies are plain JSON, and this skips the scans and
 * copies of the whole reply that finding candidates costs.
 */
function plainJson(text: string): { ok: true; value: unknown } | { ok: false } {
  if (THINK_CLOSE.test(text)) return { ok: false };
  const p = tryParse(text);
  return p.ok && isContainer(p.value) ? p : { ok: false };
}

/** The first JSON object/array found in `text`. */
export function extractJson(text: string): JsonExtraction {
  const plain = plainJson(text);
  if (plain.ok) return { ok: true, value: plain.value, repaired: false };
  for (const r of readings(text)) return { ok: true, value: r.value, repaired: r.repaired };
  return { ok: false, error: text.trim() === '' ? 'the reply was empty' : 'no JSON object found in the reply' };
}

/**
 * The first reading of `text` that satisfies `schema`. When something parses but nothing
 * validates, the error describes the first parsed reading (the one the model most likely meant).
 */
export function parseStructured<T>(text: string, schema: ZodType<T>): Structured<T> {
  const plain = plainJson(text);
  if (plain.ok) {
    const res = schema.safeParse(plain.value);
    if (res.success) return { ok: true, value: res.data, repaired: false };
    // Otherwise the full walk below reads it again and describes the error as always.
  }
  let firstError: string | null = null;
  for (const r of readings(text)) {
    const res = schema.safeParse(r.value);
    if (res.success) return { ok: true, value: res.data, repaired: r.repaired };
    firstError ??= formatZodError(res.error);
  }
  if (firstError !== null) return { ok: false, error: firstError };
  return { ok: false, error: text.trim() === '' ? 'the reply was empty' : 'no JSON object found in the reply' };
}

export function formatZodError(error: z.ZodError): string {
  return truncate(`JSON does not match the schema:\n${z.prettifyError(error)}`, MAX_ERROR_CHARS);
}

export function truncate(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}
