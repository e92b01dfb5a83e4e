/**
 * Defect-guided repair over committed shards (`reasoning-jury repair run|export|import`).
 *
 * Each committed range of a judged output is read through its manifest: its verdicts, defects
 * and steps (the decision facts the gate tests, as `decide` reads them) and its corpus parts,
 * which hold every judged record as read, mapped again with the config's `input.mapping`. The
 * gated records are retried (run), written as OpenAI Batch requests (export), or paired with a
 * batch's results (import); run and import commit one `repairs` table per range to a new output
 * under the same range names, so an interrupted command resumes and each row is written once.
 */
import { tableLogOption } from './table-log.js';
import type { JuryConfig, RepairConfig } from '../../schemas/config.js';
import type { Defect } from '../../schemas/defect.js';
import { SHARD_TABLE_NAMES, type CommitManifest, type ShardFormat } from '../../schemas/outputs.js';
import type { RepairCondition, RepairRow } from '../../schemas/repair.js';
import type { TraceRecord } from '../../schemas/trace.js';
import { factsOfRows } from '../derive/decision.js';
import { repairGate } from '../derive/repair.js';
import type { JudgeInput, JuryContext } from '../jury/judge.js';
import { generatorSeat, type RetryOutcome } from '../jury/repair.js';
import { readCorpusPart } from '../pipeline/commit/corpus-read.js';
import type { ObjectStore } from '../pipeline/storage/object-store.js';
import { mapRecord, scoreFieldsOf } from '../pipeline/record-mapping.js';
import { listCommitted, ShardCommitter } from '../pipeline/commit/shard-commit.js';
import { prepareRecord } from '../pipeline/steps/segment.js';
import { NOT_REJUDGED, repairRecord, repairRow, type Rejudged } from '../pipeline/steps/repair.js';
import { repairMessages, repairPromptHash } from '../prompts/repair.js';
import type { PromptSet } from '../prompts/templates.js';
import { type Decided, decideRecords, RedecideError } from './redecide.js';

/** One gated record of a committed range, ready for its retries. */
export interface Candidate {
  record: TraceRecord;
  input: JudgeInput;
  defects: Defect[];
  gate: string;
  rows: Decided;
}

export interface RangeCandidates {
  manifest: CommitManifest;
  candidates: Candidate[];
}

async function corpusRecords(store: ObjectStore, m: CommitManifest): Promise<Map<string, unknown>> {
  const files = m.files.filter((f) => f.table === 'corpus');
  if (files.length === 0) throw new RedecideError(`range ${m.first}-${m.last} has no corpus: repair over shards reads the records from the corpus (run with output.corpus on)`);
  const out = new Map<string, unknown>();
  for (const f of files) {
    const bytes = await store.get(f.key);
    if (!bytes) throw new RedecideError(`committed file missing: ${f.key} (listed in _commits/${m.first}-${m.last}.json)`);
    const part = await readCorpusPart(bytes, f.format === 'jsonl' ? 'jsonl' : 'parquet');
    for (const e of part.entries) out.set(`${e.row.source_unit}\u0000${e.row.source_offset}`, e.raw ?? JSON.parse(e.text!));
  }
  return out;
}

/** The gated records of every committed range of `store`, in range and verdict order. */
export async function readCandidates(store: ObjectStore, location: string, config: JuryConfig, repair: RepairConfig): Promise<RangeCandidates[]> {
  const manifests = await listCommitted(store);
  if (manifests.length === 0) throw new RedecideError(`${location} holds no committed ranges (no _commits/*.json): nothing to repair`);
  const out: RangeCandidates[] = [];
  for (const m of manifests) {
    const decided = await decideRecords(store, m, config.filter);
    const raw = decided.length ? await corpusRecords(store, m) : new Map<string, unknown>();
    const candidates: Candidate[] = [];
    for (const d of decided) {
      const gate = repairGate(repair, factsOfRows(d.verdict, d.defects, d.steps));
      if (gate === null) continue;
      const mapped = mapRecord(raw.get(`${d.verdict.source_unit}\u0000${d.verdict.source_offset}`), config.input.mapping, {}, scoreFieldsOf(config));
      if (!mapped.ok) throw new RedecideError(`record ${d.verdict.record_id} of range ${m.first}-${m.last}: its corpus row no longer maps (${mapped.error}); use the config it was judged with`);
      const prepared = prepareRecord(mapped.record, config);
      if (!prepared.ok) throw new RedecideError(`record ${d.verdict.record_id}: ${prepared.error}`);
      const defects = d.defects.map((r) => ({ statement_refs: r.statement_refs, impact: r.impact, what_went_wrong: r.what_went_wrong, evidence: r.evidence, correct_value: r.correct_value }));
      candidates.push({ record: mapped.record, input: prepared.input, defects, gate, rows: d });
    }
    out.push({ manifest: m, candidates });
  }
  return out;
}

/** The retries of a candidate, condition-major: what run, export and import all enumerate. */
export function retryJobs(repair: RepairConfig): Array<{ condition: RepairCondition; attempt: number }> {
  return repair.conditions.flatMap((condition) => Array.from({ length: repair.attempts }, (_, i) => ({ condition, attempt: i + 1 })));
}

/** Commits one range's repairs to `to` unless it is there; true when written now. */
async function commitRepairs(committer: ShardCommitter, m: CommitManifest, fromLocation: string, rows: RepairRow[], formats: readonly ShardFormat[]): Promise<boolean> {
  const res = await committer.commit({
    source: m.source,
    first: m.first,
    last: m.last,
    tables: { repairs: rows },
    ...(m.range ? { range: m.range } : {}),
    ...(m.settings ? { settings: { ...m.settings, formats: [...formats], corpus: 'off' } } : {}),
    extra: { repaired_from: fromLocation, from_checksum: m.checksum },
  });
  return !res.alreadyCommitted;
}

export interface RepairOutputOptions {
  ranges: RangeCandidates[];
  fromLocation: string;
  to: ObjectStore;
  formats: readonly ShardFormat[];
  /** checked before each manifest: throws once this command no longer holds --out's lease */
  beforeManifest?: () => Promise<void>;
}

export interface RepairOutputResult {
  ranges: number;
  existing: number;
  rows: number;
}

/** Writes each range's rows (made by `rowsOf`) to `to`, skipping ranges already committed there. */
export async function writeRepairs(o: RepairOutputOptions, rowsOf: (c: Candidate, m: CommitManifest) => Promise<RepairRow[]>): Promise<RepairOutputResult> {
  const committer = new ShardCommitter(o.to, { formats: o.formats, off: SHARD_TABLE_NAMES.filter((t) => t !== 'repairs'), ...(o.beforeManifest ? { beforeManifest: o.beforeManifest } : {}), ...tableLogOption(o.to) });
  const result = { ranges: 0, existing: 0, rows: 0 };
  for (const { manifest: m, candidates } of o.ranges) {
    result.ranges += 1;
    if (await committer.committed(m.first, m.last)) {
      result.existing += 1;
      continue;
    }
    const rows = (await Promise.all(candidates.map((c) => rowsOf(c, m)))).flat();
    if (!(await commitRepairs(committer, m, o.fromLocation, rows, o.formats))) result.existing += 1;
    result.rows += rows.length;
  }
  return result;
}

/** `repair run`: the retries through the gateway, as the stage's step makes them. */
export function runRows(jury: JuryContext, repair: RepairConfig): (c: Candidate) => Promise<RepairRow[]> {
  return (c) => repairRecord(jury, repair, c.record, c.input, c.defects, c.rows);
}

/** The batch line id of one retry: range, record, condition, attempt (parsed from the right, so ids may hold colons). */
export function customId(m: Pick<CommitManifest, 'first'>, recordId: string, condition: RepairCondition, attempt: number): string {
  return `rj:${m.first}:${recordId}:${condition}:${attempt}`;
}

/** `repair export`: one OpenAI Batch API request line per retry. */
export function exportLines(ranges: readonly RangeCandidates[], prompts: PromptSet, repair: RepairConfig, maxTokens: number): string[] {
  const lines: string[] = [];
  for (const { manifest: m, candidates } of ranges)
    for (const c of candidates)
      for (const { condition, attempt } of retryJobs(repair)) {
        const seat = generatorSeat(repair.generator, attempt);
        const body = {
          model: seat.model,
          messages: repairMessages(prompts, c.input, c.defects, condition, repair.answer),
          temperature: seat.temperature,
          ...(seat.top_p !== undefined ? { top_p: seat.top_p } : {}),
          max_tokens: seat.max_tokens ?? maxTokens,
          ...(seat.seed !== undefined ? { seed: seat.seed } : {}),
          ...(seat.reasoning_effort ? { reasoning_effort: seat.reasoning_effort } : {}),
        };
        lines.push(JSON.stringify({ custom_id: customId(m, c.record.id, condition, attempt), method: 'POST', url: '/v1/chat/completions', body }));
      }
  return lines;
}

/** What one line of a batch output file says about its request. */
interface BatchResult {
  text: string | null;
  finish_reason: string | null;
  error: string | null;
  tokens_in: number;
  tokens_out: number;
}

/** Batch output lines by custom_id: `{custom_id, response: {status_code, body}, error}`. */
export function parseBatchResults(text: string): Map<string, BatchResult> {
  const out = new Map<string, BatchResult>();
  for (const [i, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    let o: { custom_id?: unknown; response?: { status_code?: number; body?: { choices?: Array<{ message?: { content?: string | null }; finish_reason?: string }>; usage?: { prompt_tokens?: number; completion_tokens?: number } } } | null; error?: { message?: string } | null };
    try {
      o = JSON.parse(line) as typeof o;
    } catch (e) {
      throw new RedecideError(`results line ${i + 1}: not JSON (${(e as Error).message})`);
    }
    if (typeof o.custom_id !== 'string') throw new RedecideError(`results line ${i + 1}: no custom_id`);
    const body = o.response?.body;
    const choice = body?.choices?.[0];
    const status = o.response?.status_code ?? 0;
    const failed = o.error?.message ?? (status >= 400 || !choice ? `batch request failed (status ${status || 'none'})` : null);
    out.set(o.custom_id, { text: failed ? null : (choice?.message?.content ?? ''), finish_reason: failed ? null : (choice?.finish_reason ?? 'stop'), error: failed, tokens_in: body?.usage?.prompt_tokens ?? 0, tokens_out: body?.usage?.completion_tokens ?? 0 });
  }
  return out;
}

/** The `error` of a retry whose request has no line in the batch results file. */
export const NO_RESULT = 'no result for this request in the batch file';

/** `repair import`: each retry's row from its batch result, extracted and compared as a run does; a retry with no result line is a row with `error` (`onMissing` counts them). */
export function importRows(results: ReadonlyMap<string, BatchResult>, prompts: PromptSet, repair: RepairConfig, costOf: (tokensIn: number, tokensOut: number) => number | null, onMissing: () => void = () => undefined): (c: Candidate, m: CommitManifest) => Promise<RepairRow[]> {
  return async (c, m) =>
    retryJobs(repair).map(({ condition, attempt }) => {
      const r = results.get(customId(m, c.record.id, condition, attempt));
      const usage = r ? [{ phase: 'repair' as const, participant: repair.generator.id, model: repair.generator.model, endpoint: 'batch', tokens_in: r.tokens_in, tokens_out: r.tokens_out, cost_usd: costOf(r.tokens_in, r.tokens_out), latency_ms: 0, attempts: 1, outcome: r.error ? ('error' as const) : ('ok' as const) }] : [];
      if (!r) onMissing();
      const out: RetryOutcome = { condition, attempt, messages: [], text: r?.text ?? null, finish_reason: r?.finish_reason ?? null, error: r ? r.error : NO_RESULT, usage };
      const rejudged: Rejudged = NOT_REJUDGED;
      return repairRow({ record: c.record, repair, gate: c.gate, promptHash: repairPromptHash(prompts, condition, repair.answer), out, rejudged });
    });
}
