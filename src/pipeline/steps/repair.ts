import type { JuryConfig, RepairConfig } from '../../../schemas/config.js';
import { type Defect, maxImpact } from '../../../schemas/defect.js';
import type { RepairRow } from '../../../schemas/repair.js';
import type { TraceRecord } from '../../../schemas/trace.js';
import type { Verdict } from '../../../schemas/verdict.js';
import { decide, factsOfRows } from '../../derive/decision.js';
import { answersMatch, extractAnswer, originalOutcome, repairGate } from '../../derive/repair.js';
import { totalCost, type DerivedRows } from '../../derive/rows.js';
import { stepRows } from '../../derive/steps.js';
import { judgeRecord, type JudgeInput, type JuryContext } from '../../jury/judge.js';
import { type RetryOutcome, retryOnce } from '../../jury/repair.js';
import { repairPromptHash } from '../../prompts/repair.js';
import { segmentRecord } from '../../segment/index.js';
import type { Derived, Step } from '../envelope.js';

/** The repair section when it is on, else null. */
export function repairOn(config: Pick<JuryConfig, 'repair'>): RepairConfig | null {
  return config.repair?.enabled ? config.repair : null;
}

export { originalText } from '../../derive/repair.js';

export type Rejudged = Pick<RepairRow, 'rejudged' | 'new_n_defects' | 'new_max_impact' | 'new_decision'> & { usage: Verdict['usage'] };

export const NOT_REJUDGED: Rejudged = { rejudged: false, new_n_defects: null, new_max_impact: null, new_decision: null, usage: [] };

/** The retry judged again by the same jury, as a new trace of the same problem. */
async function rejudge(jury: JuryContext, record: TraceRecord, out: RetryOutcome): Promise<Rejudged> {
  if (out.text === null || out.text.trim() === '') return NOT_REJUDGED;
  const steps = segmentRecord({ trace: out.text }, jury.config.segmentation.mode === 'given' ? 'auto' : jury.config.segmentation.mode);
  const input: JudgeInput = { id: `${record.id}#repair-${out.condition}-${out.attempt}`, problem: record.problem, steps };
  const v = await judgeRecord(jury, input);
  const decision = decide(v, stepRows(v.record_id, v.n_steps, v.defects, jury.config.severity_threshold, v.error === null), jury.config.filter);
  return { rejudged: true, new_n_defects: v.error === null ? v.defects.length : null, new_max_impact: v.error === null ? maxImpact(v.defects.map((d) => d.impact)) : null, new_decision: decision.decision, usage: v.usage };
}

/** One `repairs` row from a retry (and its re-judging). */
export function repairRow(args: { record: TraceRecord; repair: RepairConfig; gate: string; promptHash: string; out: RetryOutcome; rejudged: Rejudged }): RepairRow {
  const { record, repair, out } = args;
  const kind = repair.answer.kind;
  const reference = record.reference_answer ?? null;
  const original = originalOutcome(record, kind);
  const extracted = out.text === null ? { answer: null, source: 'none' as const } : extractAnswer(out.text, out.finish_reason);
  const usage = [...out.usage, ...args.rejudged.usage];
  return {
    record_id: record.id,
    problem_id: record.problem_id ?? record.id,
    condition: out.condition,
    attempt: out.attempt,
    gate: args.gate,
    prompt_hash: args.promptHash,
    model: repair.generator.model,
    retry_text: out.text,
    finish_reason: out.finish_reason,
    extracted_answer: extracted.answer,
    answer_source: extracted.source,
    reference_answer: reference,
    original_answer: original.answer,
    original_correct: original.correct,
    correct: answersMatch(extracted.answer, reference, kind),
    rejudged: args.rejudged.rejudged,
    new_n_defects: args.rejudged.new_n_defects,
    new_max_impact: args.rejudged.new_max_impact,
    new_decision: args.rejudged.new_decision,
    tokens_in: usage.reduce((a, u) => a + u.tokens_in, 0),
    tokens_out: usage.reduce((a, u) => a + u.tokens_out, 0),
    cost_usd: totalCost(usage),
    error: out.error,
  };
}

/** Every retry of one judged record (condition-major, attempts ascending); [] when the gate passes it by. */
export async function repairRecord(jury: JuryContext, repair: RepairConfig, record: TraceRecord, input: JudgeInput, defects: readonly Defect[], rows: Pick<DerivedRows, 'verdict' | 'defects' | 'steps'>): Promise<RepairRow[]> {
  const gate = repairGate(repair, factsOfRows(rows.verdict, rows.defects, rows.steps));
  if (gate === null) return [];
  const jobs = repair.conditions.flatMap((condition) => Array.from({ length: repair.attempts }, (_, i) => ({ condition, attempt: i + 1 })));
  return Promise.all(
    jobs.map(async ({ condition, attempt }) => {
      const out = await retryOnce({ gateway: jury.gateway, prompts: jury.prompts, repair, recordId: record.id, input, defects, condition, attempt });
      const rejudged = repair.rejudge ? await rejudge(jury, record, out) : NOT_REJUDGED;
      return repairRow({ record, repair, gate, promptHash: repairPromptHash(jury.prompts, condition, repair.answer), out, rejudged });
    }),
  );
}

/** After the decision: the gated record's retries become its `repairs` rows (docs/repair.md). */
export function repairStep(jury: JuryContext, repair: RepairConfig): Step<Derived, Derived> {
  return {
    name: 'repair',
    run: async (env) => ({ ...env, rows: { ...env.rows, repairs: await repairRecord(jury, repair, env.record, env.input, env.verdict.defects, env.rows) } }),
  };
}
