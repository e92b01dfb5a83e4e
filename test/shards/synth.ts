/**
 * Deterministic synthetic shard rows for the interop tests: nulls in every nullable column,
 * empty lists, unicode from several planes and scripts, and a few very long strings.
 */
import { IMPACTS } from '../../schemas/defect.js';
import { JURY_MODES, TERMINATION_REASONS } from '../../schemas/verdict.js';
import {
  FILTER_DECISIONS,
  defectId,
  truncateRaw,
  type DeadLetterRow,
  type DecisionRow,
  type DefectRow,
  type ReviewRow,
  type StepRow,
  type VerdictDetailRow,
  type VerdictRow,
} from '../../schemas/outputs.js';
import { ANSWER_SOURCES, REPAIR_CONDITIONS, type RepairRow } from '../../schemas/repair.js';
import type { ShardRows } from '../../src/pipeline/sink.js';

export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const UNICODE = [
  'plain ascii',
  'naïve café — “quotes” ‘single’',
  '数学推理的步骤 3 有误',
  'خطأ في الخطوة الثانية', // RTL
  '🧮 emoji 👩🏽‍🔬 ZWJ sequence 🏳️‍🌈',
  'combining: e\u0301 a\u0308 \u200b zero-width',
  'tabs\tand\nnewlines\r\nand "json" {braces} \\ backslash',
  '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 astral plane 𐍈',
  '',
];

export function makeText(r: () => number, i: number): string {
  if (i % 997 === 13) return 'LONG:' + 'x≈y '.repeat(30_000); // ~120 KB, spans data pages
  return `${UNICODE[i % UNICODE.length]} #${i} ${Math.floor(r() * 1e6)}`;
}

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

export function recordId(i: number): string {
  return `rec-${String(i).padStart(6, '0')}${i % 50 === 7 ? '-ü' : ''}`;
}

export function verdictRows(n: number, seed = 1, source = 'kafka'): VerdictRow[] {
  const r = rng(seed);
  return Array.from({ length: n }, (_, i) => ({
    record_id: recordId(i),
    mode: pick(r, JURY_MODES),
    jurors_total: 3,
    jurors_ok: i % 11 === 0 ? 2 : 3,
    // Index-derived (no rng draw), so the other columns keep their values.
    phase1_seats: i % 3 === 0 ? null : 2 + (i % 2),
    escalations: i % 3 === 0 ? null : i % 2 === 1 ? [`after 2 seats: disagree_step, fatal -> jury-${i % 7}`] : [],
    n_steps: 1 + (i % 40),
    n_defects: i % 5,
    max_impact: i % 5 === 0 ? null : pick(r, IMPACTS),
    confidence: Math.round(r() * 1e6) / 1e6,
    n_dissent: i % 3,
    termination_reason: pick(r, TERMINATION_REASONS),
    rounds: i % 4,
    degraded: i % 11 === 0,
    degraded_reason: i % 11 === 0 ? 'juror j2 timed out' : null,
    error: i % 101 === 0 ? makeText(r, i) : null,
    // Above 2^31 for some rows: proves the column is a real int64.
    tokens_in: i % 7 === 0 ? 3_000_000_000 + i : 1000 + i,
    tokens_out: 200 + i,
    cost_usd: r() / 10,
    latency_ms: r() * 30_000,
    prompt_hash: `p${i % 3}`,
    config_hash: 'cfg-abc123',
    source,
    source_unit: `traces+${i % 4}`,
    source_offset: Number.MAX_SAFE_INTEGER - 10_000 + i,
    meta: i % 3 === 0 ? null : JSON.stringify({ dataset: 'gsm8k', idx: i, note: makeText(r, i) }),
  }));
}

export function defectRows(n: number, seed = 2): DefectRow[] {
  const r = rng(seed);
  return Array.from({ length: n }, (_, i) => {
    const rec = recordId(Math.floor(i / 3));
    const voted = i % 4 !== 0;
    return {
      record_id: rec,
      defect_id: defectId(rec, i % 3),
      statement_refs: i % 9 === 0 ? [] : Array.from({ length: 1 + (i % 4) }, (_, k) => 1 + k * 3 + (i % 5)),
      impact: pick(r, IMPACTS),
      what_went_wrong: makeText(r, i),
      evidence: makeText(r, i + 1),
      correct_value: i % 2 === 0 ? null : `x = ${i}`,
      vote_count: voted ? 1 + (i % 3) : null,
      voters: voted ? ['j1', 'j2', 'j3 ✓'].slice(0, 1 + (i % 3)) : [],
      category_id: null,
      leaf_id: null,
      taxonomy_status: null,
    };
  });
}

export function stepRows(n: number, seed = 3): StepRow[] {
  const r = rng(seed);
  return Array.from({ length: n }, (_, i) => {
    const rec = recordId(Math.floor(i / 10));
    const flagged = r() < 0.3;
    return {
      record_id: rec,
      step_index: 1 + (i % 10),
      max_impact: flagged ? pick(r, IMPACTS) : null,
      label: flagged,
      defect_ids: flagged ? [defectId(rec, 0), ...(i % 2 ? [defectId(rec, 1)] : [])] : [],
    };
  });
}

export function decisionRows(n: number, seed = 4): DecisionRow[] {
  const r = rng(seed);
  return Array.from({ length: n }, (_, i) => ({
    record_id: recordId(i),
    decision: pick(r, FILTER_DECISIONS),
    reason: pick(r, ['fatal_step', 'clean', 'low_confidence', 'degraded']),
    n_neutral: i % 3,
    n_minor: i % 4,
    n_major: i % 2,
    n_fatal: i % 5 === 0 ? 1 : 0,
    fatal_step_rate: i % 5 === 0 ? 0.1 : 0,
    flagged_step_rate: Math.round(r() * 1000) / 1000,
  }));
}

export function deadLetterRows(n: number, seed = 5, source = 'kafka'): DeadLetterRow[] {
  const r = rng(seed);
  return Array.from({ length: n }, (_, i) => ({
    source,
    source_unit: `traces+${i % 4}`,
    source_offset: 10 * i,
    error: i % 2 ? 'record has neither a non-empty trace nor non-empty steps' : 'invalid JSON',
    ...truncateRaw(i % 13 === 0 ? '{"id":"' + '🧮'.repeat(40_000) + '"' : `{"id": ${i}, "x": "${makeText(r, i)}"`, 65_536),
  }));
}

/**
 * Nested rows: jurors that failed (null error only when ok), empty lists at every level, a
 * juror with no defects, transcripts with and without instructions, int64 tokens above 2^31.
 */
export function verdictDetailRows(n: number, seed = 6): VerdictDetailRow[] {
  const r = rng(seed);
  return Array.from({ length: n }, (_, i) => {
    const deliberated = i % 3 !== 0;
    const turns = deliberated ? i % 6 : 0;
    const transcript = Array.from({ length: turns }, (_, t) => ({
      turn: t,
      round: Math.floor(t / 3),
      speaker: `j${1 + (t % 3)}`,
      instruction: t % 2 ? null : `address STEP-${1 + t}`,
      content: makeText(r, i * 7 + t),
    }));
    const phase1 = Array.from({ length: i % 17 === 5 ? 0 : 3 }, (_, j) => {
      const failed = (i + j) % 11 === 0;
      return {
        seat_id: `j${j + 1}`,
        model: j === 2 ? 'model-β' : 'model-a',
        status: failed ? ('failed' as const) : ('ok' as const),
        error: failed ? 'timeout after 3 attempts' : null,
        dropped_refs: (i + j) % 4 === 0 ? 1 : 0,
        defects: failed
          ? []
          : Array.from({ length: (i + j) % 3 }, (_, k) => ({
              statement_refs: k === 1 ? [] : [1 + k, 3 + (i % 5)],
              impact: pick(r, IMPACTS),
              what_went_wrong: makeText(r, i + j + k),
              evidence: makeText(r, i + 2 * j + k),
              correct_value: k % 2 ? `x = ${i}` : null,
            })),
      };
    });
    return {
      record_id: recordId(i),
      mode: deliberated ? ('deliberation' as const) : pick(r, JURY_MODES),
      termination_reason: deliberated ? pick(r, TERMINATION_REASONS) : ('not_applicable' as const),
      rounds: deliberated ? Math.ceil(turns / 3) : 0,
      turns,
      last_speaker: transcript.at(-1)?.speaker ?? null,
      dropped_refs: i % 9 === 0 ? 2 : 0,
      phase1,
      dissenting_views: i % 4 === 0 ? [] : [`j2 (minor, STEP-${i % 7}): ${makeText(r, i)}`],
      transcript,
      calls: phase1.map((p, j) => ({
        phase: 'phase1' as const,
        participant: p.seat_id,
        model: p.model,
        tokens_in: i % 7 === 0 ? 3_000_000_000 + i : 900 + i + j,
        tokens_out: 100 + j,
        cost_usd: r() / 100,
        latency_ms: r() * 10_000,
        attempts: p.status === 'failed' ? 3 : 1,
        outcome: p.status === 'failed' ? ('error' as const) : ('ok' as const),
      })),
      // The verification passes: off (null), ran and changed nothing ([]), or a few entries.
      ...passDetail(r, i),
      ...groundingDetail(r, i),
    };
  });
}

function passDefect(r: () => number, i: number, k: number) {
  return { statement_refs: [1 + k], impact: pick(r, IMPACTS), what_went_wrong: makeText(r, i + k), evidence: makeText(r, 2 * i + k), correct_value: k % 2 ? null : `y = ${k}`, vote_count: k % 3 === 0 ? null : k, voters: k % 3 === 0 ? [] : ['j1'] };
}

function passDetail(r: () => number, i: number): Pick<VerdictDetailRow, 'dropped_negatives' | 'negative_adjudications'> {
  const n = i % 4 === 0 ? null : i % 4;
  return {
    dropped_negatives: n === null ? null : Array.from({ length: n - 1 }, (_, k) => ({ defect: passDefect(r, i, k), reason: makeText(r, i + 3 * k) })),
    negative_adjudications:
      n === null || i % 5 === 0 ? null : Array.from({ length: n }, (_, k) => ({ defect: passDefect(r, i, k), origin: k % 2 ? ('dissent' as const) : ('split_vote' as const), ruling: k % 3 ? ('upheld' as const) : ('rejected' as const), rationale: makeText(r, i + 5 * k) })),
  };
}

/** Grounding: off (null), ran and found nothing to record ([]), or a few checks, corrections and claim checks. */
function groundingDetail(r: () => number, i: number): Pick<VerdictDetailRow, 'grounding' | 'voter_corrections' | 'claim_checks'> {
  if (i % 3 === 0) return { grounding: null, voter_corrections: null, claim_checks: null };
  const n = i % 5;
  const status = ['grounded', 'relocated', 'ungrounded'] as const;
  return {
    grounding: Array.from({ length: n }, (_, k) => ({ defect_index: k, cited_refs: `${1 + k},${2 + k}`, evidence: makeText(r, i + 7 * k), status: status[k % 3]!, outcome: k % 3 === 2 ? ('dropped' as const) : ('kept' as const), quotes: k, quotes_found: k % 3 === 2 ? 0 : k, best_match: k % 3 === 2 ? ('none' as const) : ('exact' as const), corrected_refs: k % 3 === 1 ? `${5 + k}` : null, impact: k % 4 === 3 ? null : (['minor', 'major', 'fatal'] as const)[k % 3]! })),
    voter_corrections: i % 2 ? [] : [{ defect_index: 0, voters_before: 'j1,j2', voters_after: 'j1', vote_count_before: i % 4 ? 2 : null, vote_count_after: 1 }],
    claim_checks: i % 7 ? null : [{ turn: 1, speaker: 'j2', refs: '3', quoted: makeText(r, i), decided_by: 'failure' as const, result: 'accepted_on_failure' as const, error: 'timeout after 3 attempts' }],
  };
}

/** A few thousand rows per table (the brief's interop size). */
export function allTables(scale = 1, source = 'kafka'): Required<ShardRows> {
  return {
    verdicts: verdictRows(2000 * scale, 1, source),
    defects: defectRows(3000 * scale),
    steps: stepRows(4000 * scale),
    decisions: decisionRows(2000 * scale),
    verdict_details: verdictDetailRows(1000 * scale),
    dead_letters: deadLetterRows(300 * scale, 5, source),
    repairs: repairRows(500 * scale),
    reviews: reviewRows(200 * scale),
  };
}

/** `reviews` rows: both decisions, notes and none, reviewers with unicode. */
export function reviewRows(n: number): ReviewRow[] {
  return Array.from({ length: n }, (_, i) => ({
    record_id: recordId(i),
    decision: i % 3 === 0 ? 'drop' : 'keep',
    reviewer: i % 2 ? 'ana' : 'zoë',
    reviewed_at: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
    note: i % 4 === 0 ? null : `note ${i} <b>`,
  }));
}

/** `repairs` rows: every nullable column null somewhere, failed retries without text, re-judged and not. */
export function repairRows(n: number, seed = 9): RepairRow[] {
  const r = rng(seed);
  return Array.from({ length: n }, (_, i) => {
    const failed = i % 7 === 0;
    const ref = i % 5 === 0 ? null : String(i % 1000);
    const rejudged = i % 3 === 0 && !failed;
    return {
      record_id: recordId(Math.floor(i / 2)),
      problem_id: `p${i % 30}`,
      condition: REPAIR_CONDITIONS[i % 2]!,
      attempt: 1 + (i % 3),
      gate: pick(r, ['any_defect', 'fatal', 'weak_arithmetic']),
      prompt_hash: pick(r, ['a1b2c3d4e5f60718', '0f1e2d3c4b5a6978']),
      model: 'gen-model',
      retry_text: failed ? null : makeText(r, i),
      finish_reason: failed ? null : pick(r, ['stop', 'length']),
      extracted_answer: failed || i % 4 === 0 ? null : String((i * 7) % 1000),
      answer_source: failed ? 'none' : ANSWER_SOURCES[i % 3]!,
      reference_answer: ref,
      original_answer: i % 6 === 0 ? null : String(i % 997),
      original_correct: ref === null ? null : i % 2 === 0,
      correct: ref === null ? null : i % 3 !== 0,
      rejudged,
      new_n_defects: rejudged ? i % 4 : null,
      new_max_impact: rejudged && i % 4 ? pick(r, IMPACTS) : null,
      new_decision: rejudged ? pick(r, FILTER_DECISIONS) : null,
      tokens_in: 1000 + i,
      tokens_out: 2 ** 31 + i,
      cost_usd: i % 8 === 0 ? null : Math.round(r() * 1e6) / 1e6,
      error: failed ? makeText(r, i + 1) || 'call failed' : null,
    };
  });
}
