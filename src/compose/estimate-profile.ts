/**
 * What a dry run cannot see without calling a model: how long replies are and, in deliberation,
 * how many turns a record takes and how much transcript each turn carries. Either the documented
 * defaults below, or measured from the audit log of an earlier (pilot) run on other records.
 */
import { readFileSync } from 'node:fs';

/** One kind of Phase 2 call: calls per record, reply tokens, and prompt tokens besides the record's Phase 1 prompt. */
export interface CallShape {
  calls: number;
  out: number;
  /** prompt tokens on top of the record's Phase 1 prompt (0 when the call does not carry the trace: see `trace`) */
  extra_in: number;
  /** whether the call's prompt repeats the record's trace (juror turns, extraction) or not (the moderator) */
  trace: boolean;
}

export interface ReplyProfile {
  /** where the numbers come from: `defaults`, or the audit log they were measured from */
  from: string;
  phase1_out: number;
  /** Phase 1 calls per record measured in a pilot's audit log; absent with the defaults (a cascade is then projected at every seat, an upper bound) */
  phase1_calls?: number;
  consolidation_out: number;
  deliberation: { juror_turn: CallShape; moderator: CallShape; extraction: CallShape };
}

/**
 * Defaults: a Phase 1 reply lists a few defects as JSON (~400 tokens), the consolidator's merged
 * list is longer (~600); a deliberation runs two rounds of every juror (capped by max_turns), a
 * moderator decision before each turn and one after, one extraction; each turn's prompt carries
 * the panel's findings and half of the moderator's window of earlier turns.
 */
export function defaultProfile(jurors: number, maxTurns: number, recentWindow: number): ReplyProfile {
  const turns = Math.min(maxTurns, 2 * jurors);
  const turnOut = 150;
  const findings = jurors * 400;
  const window = Math.min(recentWindow, turns) / 2;
  return {
    from: 'defaults',
    phase1_out: 400,
    consolidation_out: 600,
    deliberation: {
      juror_turn: { calls: turns, out: turnOut, extra_in: findings + window * turnOut, trace: true },
      moderator: { calls: turns + 1, out: 200, extra_in: findings + window * turnOut, trace: false },
      extraction: { calls: 1, out: 600, extra_in: findings + turns * turnOut, trace: true },
    },
  };
}

interface AuditCall {
  phase: string;
  record_id: string;
  usage?: { tokens_in: number; tokens_out: number } | null;
}

const mean = (xs: readonly number[], fallback: number) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : fallback);

/**
 * A profile measured from an audit log (`--audit-log` of an earlier run, `audit_log.path`):
 * mean reply tokens per kind of call, calls per record, and how much Phase 2 prompts carry
 * besides the record's own Phase 1 prompt. Kinds of call the log does not have keep `base`.
 */
export function profileFromAuditLog(path: string, base: ReplyProfile): ReplyProfile {
  const calls = readFileSync(path, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as AuditCall).filter((c) => c.usage);
  const p1in = new Map<string, number>();
  for (const c of calls) if (c.phase === 'phase1' && !p1in.has(c.record_id)) p1in.set(c.record_id, c.usage!.tokens_in);
  const records = new Set(calls.map((c) => c.record_id)).size;
  const of = (phase: string) => calls.filter((c) => c.phase === phase);
  const outs = (phase: string, fallback: number) => mean(of(phase).map((c) => c.usage!.tokens_out), fallback);
  const shape = (phase: string, b: CallShape): CallShape => {
    const cs = of(phase);
    if (!cs.length) return b;
    const extra = cs.map((c) => c.usage!.tokens_in - (b.trace ? (p1in.get(c.record_id) ?? 0) : 0));
    return { calls: cs.length / records, out: outs(phase, b.out), extra_in: mean(extra, b.extra_in), trace: b.trace };
  };
  const d = base.deliberation;
  return {
    from: `${path} (${calls.length} calls over ${records} records)`,
    phase1_out: outs('phase1', base.phase1_out),
    ...(records > 0 ? { phase1_calls: of('phase1').length / records } : {}),
    consolidation_out: outs('consolidation', base.consolidation_out),
    deliberation: { juror_turn: shape('juror_turn', d.juror_turn), moderator: shape('moderator', d.moderator), extraction: shape('extraction', d.extraction) },
  };
}
