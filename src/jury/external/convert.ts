/**
 * An external judge's recorded output for one record -> the defects of a Phase 1 judgement.
 * Each function gets the value as its source held it and the trace's step count; a value of
 * the wrong shape is an error (the seat fails for the record), never silently read as "clean".
 */
import { type Defect, type Impact, ModelDefect } from '../../../schemas/defect.js';
import type { ExternalSeatConfig } from '../../../schemas/external.js';
import { normalizeDefects } from '../normalize.js';

export type Converted = { ok: true; defects: Defect[]; droppedRefs: number } | { ok: false; error: string };

/** Parquet lists come back as typed arrays from some readers. */
const asList = (v: unknown): unknown[] | null => (Array.isArray(v) ? v : ArrayBuffer.isView(v) && !(v instanceof DataView) ? Array.from(v as unknown as ArrayLike<unknown>) : null);

const typeOf = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

function stepDefect(step: number, impact: Impact, what: string): Defect {
  return { statement_refs: [step], what_went_wrong: what, impact, evidence: '' };
}

/** The band with the highest `at_least` not above `p`; below every band: minor. */
export function severityOf(p: number, bands: ExternalSeatConfig['severity']): Impact {
  let best: { at_least: number; impact: Impact } | null = null;
  for (const b of bands) if (b.at_least <= p && (best === null || b.at_least > best.at_least)) best = b;
  return best?.impact ?? 'minor';
}

/** Per-step probabilities: one defect per step whose error probability reaches the threshold. */
export function fromStepScores(value: unknown, nSteps: number, seat: ExternalSeatConfig): Converted {
  const list = asList(value);
  if (!list) return { ok: false, error: `step scores at "${seat.field}" are ${typeOf(value)}, not a list of numbers` };
  if (list.length !== nSteps) return { ok: false, error: `${list.length} step scores for ${nSteps} steps` };
  const defects: Defect[] = [];
  for (let i = 0; i < list.length; i++) {
    const s = list[i];
    if (typeof s !== 'number' || !Number.isFinite(s) || s < 0 || s > 1) return { ok: false, error: `step score ${i + 1} is ${JSON.stringify(s)}, not a probability in 0..1` };
    const pErr = seat.polarity === 'correct' ? 1 - s : s;
    if (pErr < seat.threshold) continue;
    const what = `${seat.id} scored this step ${s.toFixed(3)} (error probability ${pErr.toFixed(3)}, threshold ${seat.threshold})`;
    defects.push(stepDefect(i + 1, severityOf(pErr, seat.severity), what));
  }
  return { ok: true, defects, droppedRefs: 0 };
}

/** Defects in our schema (lenient like a model's reply: "STEP-3" or 3), refs checked against the trace. */
export function fromDefects(value: unknown, nSteps: number): Converted {
  const list = asList(value);
  if (!list) return { ok: false, error: `defects are ${typeOf(value)}, not a list` };
  const parsed = ModelDefect.array().safeParse(list.map((d) => (d && typeof d === 'object' && 'statement_refs' in d ? { ...d, statement_refs: asList(d.statement_refs) ?? d.statement_refs } : d)));
  if (!parsed.success) return { ok: false, error: `defects do not match the defect schema: ${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message}` };
  // Voters and counts of the source's own jury mean nothing here: this seat is one voter.
  const n = normalizeDefects(parsed.data.map(({ vote_count: _v, voters: _w, ...d }) => d), nSteps);
  return { ok: true, defects: n.defects, droppedRefs: n.droppedRefs + n.droppedDefects };
}

/** ProcessBench prediction: the earliest erroneous step's index (`index_base`), -1 for none. */
export function fromFirstError(value: unknown, nSteps: number, seat: ExternalSeatConfig): Converted {
  const v = typeof value === 'bigint' ? Number(value) : value;
  if (typeof v !== 'number' || !Number.isInteger(v)) return { ok: false, error: `first-error index is ${JSON.stringify(value)}, not an integer` };
  if (v === -1) return { ok: true, defects: [], droppedRefs: 0 };
  const step = v + (1 - seat.index_base);
  if (step < 1 || step > nSteps) return { ok: false, error: `first-error index ${v} (base ${seat.index_base}) names no step of ${nSteps}` };
  return { ok: true, defects: [stepDefect(step, seat.impact, `${seat.id} marks this step as the first error`)], droppedRefs: 0 };
}

/** DeltaBench-style section numbers (1-based): one defect per section; numbers outside the trace are dropped and counted. */
export function fromSections(value: unknown, nSteps: number, seat: ExternalSeatConfig): Converted {
  const list = asList(value);
  if (!list) return { ok: false, error: `section numbers are ${typeOf(value)}, not a list` };
  const steps = new Set<number>();
  let dropped = 0;
  for (const x of list) {
    const n = typeof x === 'bigint' ? Number(x) : x;
    if (typeof n !== 'number' || !Number.isInteger(n)) return { ok: false, error: `section number ${JSON.stringify(x)} is not an integer` };
    if (n < 1 || n > nSteps) dropped++;
    else steps.add(n);
  }
  const defects = [...steps].sort((a, b) => a - b).map((s) => stepDefect(s, seat.impact, `${seat.id} marks this section as erroneous`));
  return { ok: true, defects, droppedRefs: dropped };
}
