/**
 * Raw source rows → validated TraceRecords, or a clear, path-qualified reason why not.
 *
 * The user's rows have their own shape; a FieldMapping says where each TraceRecord field lives
 * (dotted paths). Limits stop absurd inputs before they reach the jury (token cost, memory).
 */
import { z } from 'zod';
import { DEFAULT_MAX_STEPS, type JuryConfig } from '../../schemas/config.js';
import { FieldMapping, TraceRecord } from '../../schemas/trace.js';
import type { SourcePosition } from '../../schemas/trace.js';
import { stepCapReason } from '../segment/index.js';
import { type Admitted, type Dead, deadLetter } from './envelope.js';
import {
  DEFAULT_MAX_RAW_TEXT_BYTES,
  formatLimit,
  formatSize,
  rawTextFromValue,
  type SourceDeadItem,
  type SourceItem,
} from './source.js';

export interface MappingLimits {
  /** Max UTF-8 bytes of `trace`, and separately of all `steps` together. */
  maxTraceBytes: number;
  /**
   * Max number of steps in a record's own list: the step cap, `segmentation.max_steps`, checked
   * here too so an oversized list is refused before it is parsed (callers pass the configured
   * value; the default is the config's default).
   */
  maxSteps: number;
  /** Max UTF-8 bytes of `problem` and of `final_solution`. */
  maxFieldBytes: number;
  /** Max bytes of `meta` serialized as JSON. */
  maxMetaBytes: number;
}

export const DEFAULT_MAPPING_LIMITS: Readonly<MappingLimits> = Object.freeze({
  maxTraceBytes: 8 * 1024 * 1024,
  maxSteps: DEFAULT_MAX_STEPS,
  maxFieldBytes: 1024 * 1024,
  maxMetaBytes: 1024 * 1024,
});

/** The mapping with every default applied (id ← "id", problem ← "problem", ...). */
export const DEFAULT_FIELD_MAPPING: FieldMapping = FieldMapping.parse({});

export type MapResult = { ok: true; record: TraceRecord } | { ok: false; error: string };

/**
 * Looks up a dotted path. An own key equal to the whole remaining path wins over splitting, so
 * flattened columns literally named "data.question" still resolve. Only own properties are read
 * (a path like "constructor" must not reach the prototype).
 */
export function getPath(obj: unknown, path: string): unknown {
  if (path === '') return obj;
  if (obj === null || typeof obj !== 'object') return undefined;
  if (Object.hasOwn(obj, path)) return (obj as Record<string, unknown>)[path];
  const dot = path.indexOf('.');
  if (dot < 0) return undefined;
  // Try the longest own-key prefix first: "a.b.c" → key "a.b" then "c", else key "a" then "b.c".
  for (let cut = path.lastIndexOf('.'); cut > 0; cut = path.lastIndexOf('.', cut - 1)) {
    const head = path.slice(0, cut);
    if (Object.hasOwn(obj, head)) return getPath((obj as Record<string, unknown>)[head], path.slice(cut + 1));
  }
  return undefined;
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !ArrayBuffer.isView(v) && !(v instanceof Date);
}

/** Ids are often numeric in benchmark files; the record id is always a string. */
function coerceScalarToString(v: unknown): unknown {
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v === 'bigint') return v.toString();
  return v;
}

function utf8Bytes(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

function formatIssuePath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out ? `.${String(seg)}` : String(seg);
  }
  return out || '(record)';
}

/** "problem: expected string, received number" — zod's message minus its generic prefix. */
export function formatZodError(err: z.ZodError): string {
  return err.issues
    .map((i) => `${formatIssuePath(i.path)}: ${i.message.replace(/^Invalid input: /, '')}`)
    .join('; ');
}

function buildMeta(raw: object, spec: string | string[]): Record<string, unknown> {
  if (typeof spec === 'string') {
    const v = getPath(raw, spec);
    if (v === undefined || v === null) return {};
    if (isPlainObject(v)) return { ...v };
    return { [spec]: v }; // a single scalar column named as "meta": keep it under its path
  }
  const meta: Record<string, unknown> = {};
  for (const path of spec) {
    const v = getPath(raw, path);
    if (v !== undefined) meta[path] = v;
  }
  return meta;
}

/** Null in a nullable column means "absent"; except first_error_step, where null means "no error". */
function buildGold(v: unknown): unknown {
  if (!isPlainObject(v)) return v;
  const out: Record<string, unknown> = {};
  for (const [k, val] of Object.entries(v)) {
    if (val === null && k !== 'first_error_step') continue;
    out[k] = ArrayBuffer.isView(val) && !(val instanceof DataView) ? Array.from(val as unknown as ArrayLike<unknown>) : val;
  }
  return out;
}

function checkLimits(c: Record<string, unknown>, limits: MappingLimits): string[] {
  const errors: string[] = [];
  const over = (field: string, bytes: number, limit: number): void => {
    errors.push(`${field} is ${formatSize(bytes)}, over the ${formatLimit(limit)} limit`);
  };
  // UTF-8 bytes ≤ 3 × UTF-16 length, so short strings skip the exact byte count.
  if (typeof c.trace === 'string' && c.trace.length > limits.maxTraceBytes / 3) {
    const b = utf8Bytes(c.trace);
    if (b > limits.maxTraceBytes) over('trace', b, limits.maxTraceBytes);
  }
  if (Array.isArray(c.steps)) {
    const overCap = stepCapReason(c.steps.length, limits.maxSteps);
    if (overCap !== null) {
      errors.push(overCap);
    } else {
      let total = 0;
      for (const s of c.steps) if (typeof s === 'string') total += utf8Bytes(s);
      if (total > limits.maxTraceBytes) over('steps', total, limits.maxTraceBytes);
    }
  }
  for (const field of ['problem', 'final_solution'] as const) {
    const v = c[field];
    if (typeof v === 'string' && v.length > limits.maxFieldBytes / 3) {
      const b = utf8Bytes(v);
      if (b > limits.maxFieldBytes) over(field, b, limits.maxFieldBytes);
    }
  }
  if (c.meta !== undefined) {
    let json: string | undefined;
    try {
      json = JSON.stringify(c.meta, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
    } catch (e) {
      errors.push(`meta: not serializable (${(e as Error).message})`);
    }
    if (json !== undefined) {
      const b = utf8Bytes(json);
      if (b > limits.maxMetaBytes) over('meta', b, limits.maxMetaBytes);
    }
  }
  return errors;
}

/** Per `step_scores` external seat id, the path of its scores in each input row. */
export type ScoreFields = Readonly<Record<string, string>>;

export const scoreFieldsOf = (config: Pick<JuryConfig, 'jurors'>): ScoreFields =>
  Object.fromEntries(config.jurors.flatMap((j) => (j.kind === 'external' && j.format === 'step_scores' && j.field ? [[j.id, j.field]] : [])));

/** The scores each seat's path holds; nothing there is left out (the seat's `on_missing` decides). */
function readScores(raw: object, fields: ScoreFields): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  for (const [seat, path] of Object.entries(fields)) {
    const v = getPath(raw, path);
    if (v === undefined || v === null) continue;
    out[seat] = ArrayBuffer.isView(v) && !(v instanceof DataView) ? Array.from(v as unknown as ArrayLike<unknown>) : v;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * Maps one raw row to a TraceRecord.
 *  - id: string, or a finite number / bigint (stringified); required.
 *  - problem: string; required. trace / final_solution: strings (final_solution may be numeric).
 *  - steps: array of strings, kept as given; an empty array counts as absent (the trace is used).
 *  - meta: list of paths (copied under their path) or one path to an object (its entries copied).
 *  - null in any optional field means absent, as nullable Parquet columns produce it.
 *  - scores: per `step_scores` seat, the value at its `field` (checked when the seat reads it).
 */
export function mapRecord(
  raw: unknown,
  mapping: FieldMapping = DEFAULT_FIELD_MAPPING,
  limits: Partial<MappingLimits> = {},
  scoreFields: ScoreFields = {},
): MapResult {
  const lim: MappingLimits = { ...DEFAULT_MAPPING_LIMITS, ...limits };
  if (!isPlainObject(raw)) return { ok: false, error: `record: expected object, received ${typeName(raw)}` };

  const errors: string[] = [];
  const required = (field: 'id' | 'problem'): unknown => {
    const v = getPath(raw, mapping[field]);
    if (v === undefined || v === null) errors.push(`${field}: missing (no value at '${mapping[field]}')`);
    return v;
  };
  const optional = (path: string): unknown => {
    const v = getPath(raw, path);
    return v === null ? undefined : v;
  };

  const candidate: Record<string, unknown> = {
    id: coerceScalarToString(required('id')),
    problem: required('problem'),
    trace: optional(mapping.trace),
    steps: optional(mapping.steps),
    final_solution: coerceScalarToString(optional(mapping.final_solution)),
    meta: buildMeta(raw, mapping.meta),
    gold: buildGold(optional(mapping.gold)),
    ...(mapping.reference_answer ? { reference_answer: coerceScalarToString(optional(mapping.reference_answer)) } : {}),
    ...(mapping.problem_id ? { problem_id: coerceScalarToString(optional(mapping.problem_id)) } : {}),
  };
  if (Array.isArray(candidate.steps) && candidate.steps.length === 0) candidate.steps = undefined;
  candidate.scores = readScores(raw, scoreFields);
  if (errors.length > 0) return { ok: false, error: errors.join('; ') };

  const limitErrors = checkLimits(candidate, lim);
  if (limitErrors.length > 0) return { ok: false, error: limitErrors.join('; ') };

  for (const k of Object.keys(candidate)) if (candidate[k] === undefined) delete candidate[k];
  const parsed = TraceRecord.safeParse(candidate);
  if (!parsed.success) return { ok: false, error: formatZodError(parsed.error) };
  return { ok: true, record: parsed.data };
}

export type MappedItem =
  | { ok: true; position: SourcePosition; record: TraceRecord }
  | SourceDeadItem;

/** Source item → record or dead letter; a mapping failure keeps the row (as JSON) as raw text. */
export function mapSourceItem(
  item: SourceItem,
  mapping: FieldMapping = DEFAULT_FIELD_MAPPING,
  limits: Partial<MappingLimits> = {},
  maxRawTextBytes = DEFAULT_MAX_RAW_TEXT_BYTES,
  scoreFields: ScoreFields = {},
): MappedItem {
  if (!item.ok) return item;
  const r = mapRecord(item.raw, mapping, limits, scoreFields);
  if (r.ok) return { ok: true, position: item.position, record: r.record };
  const raw = rawTextFromValue(item.raw, maxRawTextBytes);
  return { position: item.position, ok: false, error: r.error, rawText: raw.rawText, rawTextTruncated: raw.rawTextTruncated };
}

// ---- Intake: where a record enters the stage ----------------------------------------------
// It runs when the record is pulled, before the steps, because the record's input size decides
// which range it falls in (./range-planner.ts).

export interface IntakeSettings {
  /** where the record's fields live in the source rows */
  mapping: FieldMapping;
  /** a record's own steps list over this is a dead letter before it is parsed (segmentation.max_steps) */
  maxSteps: number;
  /** where `step_scores` external seats find their scores (absent: none) */
  scoreFields?: ScoreFields;
}

export const intakeSettings = (config: Pick<JuryConfig, 'input' | 'segmentation' | 'jurors'>): IntakeSettings => ({
  mapping: config.input.mapping,
  maxSteps: config.segmentation.max_steps,
  scoreFields: scoreFieldsOf(config),
});

export interface Intake {
  env: Admitted | Dead;
  /** input size for range rotation: deterministic from the input, cheap to compute */
  chars: number;
}

function recordChars(r: TraceRecord): number {
  return r.problem.length + (r.trace?.length ?? 0) + (r.steps?.reduce((a, s) => a + s.length, 0) ?? 0) + (r.final_solution?.length ?? 0);
}

export function intake(item: SourceItem, settings: IntakeSettings): Intake {
  const mapped = mapSourceItem(item, settings.mapping, { maxSteps: settings.maxSteps }, DEFAULT_MAX_RAW_TEXT_BYTES, settings.scoreFields);
  if (!mapped.ok) {
    const dead = deadLetter(item.position, mapped.error, mapped.rawText, mapped.rawTextTruncated);
    return { env: { position: item.position, item, dead }, chars: mapped.rawText.length };
  }
  const record = mapped.record;
  // Connector facts (Kafka topic, offset, headers) go under the record's own meta fields.
  if (item.ok && item.meta) record.meta = { ...item.meta, ...record.meta };
  return { env: { position: item.position, item, record }, chars: recordChars(record) };
}
