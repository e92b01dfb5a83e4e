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
// A reply full of LaTeX braces could make the candidate scan quadratic; these bound it: at most
// this many starts, and this many characters scanned over all of them.
const MAX_SCAN_STARTS = 200;
const MAX_SCAN_WORK = 2_000_000;
/**
 * Replies longer than this are only parsed as they are (linear work), never searched for an
 * object inside prose, fences or think blocks: far above a real verdict, and it keeps one
 * runaway reply from holding the judging thread (and every other record) for seconds.
 */
export const MAX_SEARCH_CHARS = 1_000_000;
/** jsonrepair is for almost-JSON verdicts; on a megabyte of brackets it recurses for a second. */
const MAX_REPAIR_CHARS = 200_000;

// Every think block ends with a closing tag; without one, stripping them changes nothing.
const THINK_CLOSE = /<\/think/i;
const THINK_OPEN = /<think(?:ing)?>/gi;
const THINK_END = /<\/think(?:ing)?>/gi;

/** `text` without its <think>…</think> blocks, in one pass (a regex with a lazy body is quadratic on unclosed tags). */
function stripThink(text: string): string {
  if (!THINK_CLOSE.test(text)) return text;
  let out = '';
  let pos = 0;
  for (;;) {
    THINK_OPEN.lastIndex = pos;
    const open = THINK_OPEN.exec(text);
    if (!open) break;
    THINK_END.lastIndex = open.index + open[0].length;
    const close = THINK_END.exec(text);
    if (!close) break; // no later block can close either
    out += text.slice(pos, open.index);
    pos = close.index + close[0].length;
  }
  return out + text.slice(pos);
}

/** Markdown fences (```lang … ```) in order, found with indexOf; `closed` false for a last one cut off. */
function fences(body: string): Array<{ lang: string; text: string; closed: boolean }> {
  const out: Array<{ lang: string; text: string; closed: boolean }> = [];
  let pos = 0;
  for (;;) {
    const open = body.indexOf('```', pos);
    if (open < 0) break;
    const eol = body.indexOf('\n', open + 3);
    if (eol < 0) break;
    const lang = (/^[ \t]*([A-Za-z0-9_-]*)/.exec(body.slice(open + 3, eol))?.[1] ?? '').toLowerCase();
    const close = body.indexOf('```', eol + 1);
    out.push({ lang, text: body.slice(eol + 1, close < 0 ? body.length : close), closed: close >= 0 });
    if (close < 0) break;
    pos = close + 3;
  }
  return out;
}

/** Candidate JSON texts in the order we trust them. */
function candidates(body: string): string[] {
  const out: string[] = [];
  for (const f of fences(body)) {
    if (f.closed && (f.lang === '' || f.lang === 'json' || f.lang === 'json5' || f.lang === 'jsonc')) out.push(f.text.trim());
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
  let work = 0;
  while (i < text.length && starts < MAX_SCAN_STARTS && work < MAX_SCAN_WORK) {
    const c = text[i];
    if (c !== '{' && c !== '[') {
      i++;
      continue;
    }
    starts++;
    const end = scanBalanced(text, i, MAX_SCAN_WORK - work);
    work += (end < 0 ? text.length : end + 1) - i;
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

/** Index of the bracket closing the one at `start`, or -1 (also when `budget` characters did not reach it). */
function scanBalanced(text: string, start: number, budget: number): number {
  const stack: string[] = [];
  let inString = false;
  let escaped = false;
  const stop = Math.min(text.length, start + budget);
  for (let j = start; j < stop; j++) {
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
function repairInputs(body: string): string[] {
  const out: string[] = [];
  // Closed fences, then an unterminated one (a reply cut off by max_tokens).
  for (const f of fences(body)) out.push(f.text.trim());
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
  if (text.length > MAX_SEARCH_CHARS) return;
  const body = stripThink(text).trim();
  for (const c of candidates(body)) {
    const p = tryParse(c);
    if (p.ok && isContainer(p.value)) yield { value: p.value, repaired: false };
  }
  for (const c of repairInputs(body)) {
    if (c.length > MAX_REPAIR_CHARS) continue;
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
  return { ok: false, error: notFound(text) };
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
  return { ok: false, error: notFound(text) };
}

function notFound(text: string): string {
  if (text.length > MAX_SEARCH_CHARS) return `the reply (${text.length} characters) is not one JSON object, and is too long to search for one (over ${MAX_SEARCH_CHARS})`;
  return text.trim() === '' ? 'the reply was empty' : 'no JSON object found in the reply';
}

export function formatZodError(error: z.ZodError): string {
  return truncate(`JSON does not match the schema:\n${z.prettifyError(error)}`, MAX_ERROR_CHARS);
}

export function truncate(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}
