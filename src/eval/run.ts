import PQueue from 'p-queue';
import type { JuryConfig, ParticipantConfig } from '../../schemas/config.js';
import type { TraceRecord } from '../../schemas/trace.js';
import type { Verdict } from '../../schemas/verdict.js';
import { mergedUnion } from '../jury/aggregate.js';
import { consolidate } from '../jury/consolidate.js';
import { deliberate } from '../jury/deliberation/index.js';
import { ExternalRecordMissing } from '../jury/external/index.js';
import { type JudgeInput, judgeRecord } from '../jury/judge.js';
import { minJurors, seatWithSeed } from '../jury/seats.js';
import { prepareRecord } from '../pipeline/steps/segment.js';
import type { JuryRuntime } from '../jury/runtime.js';
import { createRng } from '../util/prng.js';
import type { Phase2Runner } from './knockout.js';

/** `n` records drawn without replacement by a seeded shuffle, kept in their file order. */
export function sampleRecords<T>(records: readonly T[], n: number | null, seed: number | string): T[] {
  if (n === null || n >= records.length) return [...records];
  const rng = createRng(['eval-sample', seed]);
  const idx = records.map((_, i) => i);
  for (let i = 0; i < n; i++) {
    const j = i + Math.floor(rng.next() * (idx.length - i));
    [idx[i], idx[j]] = [idx[j]!, idx[i]!];
  }
  return idx
    .slice(0, n)
    .sort((a, b) => a - b)
    .map((i) => records[i]!);
}

/** Benchmark steps are gold boundaries: the jury must see exactly them, whatever the config says. */
export function evalConfig(config: JuryConfig): JuryConfig {
  return { ...config, segmentation: { ...config.segmentation, mode: 'given' } };
}

/** What the jury reads for each record (records the stage would dead-letter are left out). */
export function prepareInputs(config: JuryConfig, records: readonly TraceRecord[]): Map<string, JudgeInput> {
  const out = new Map<string, JudgeInput>();
  for (const r of records) {
    const p = prepareRecord(r, config);
    if (p.ok) out.set(r.id, p.input);
  }
  return out;
}

export interface JudgedRecords {
  verdicts: Verdict[];
  inputs: Map<string, JudgeInput>;
  /** records the stage would dead-letter (e.g. more steps than segmentation.max_steps) */
  unprepared: Array<{ record_id: string; error: string }>;
}

/** Judge records with bounded concurrency (simulated endpoints got the records' gold when they were built). */
export async function judgeRecords(runtime: JuryRuntime, records: readonly TraceRecord[], opts: { concurrency: number; onDone?: () => void }): Promise<JudgedRecords> {
  const out: JudgedRecords = { verdicts: [], inputs: new Map(), unprepared: [] };
  const queue = new PQueue({ concurrency: opts.concurrency });
  const results = await Promise.all(
    records.map((r) =>
      queue.add(async () => {
        const p = prepareRecord(r, runtime.jury.config);
        if (!p.ok) {
          out.unprepared.push({ record_id: r.id, error: p.error });
          return null;
        }
        out.inputs.set(r.id, p.input);
        try {
          return await judgeRecord(runtime.jury, p.input);
        } catch (err) {
          // An external seat's source lacks it (`on_missing: dead_letter`): the stage would dead-letter it too.
          if (!(err instanceof ExternalRecordMissing)) throw err;
          out.inputs.delete(r.id);
          out.unprepared.push({ record_id: r.id, error: err.message });
          return null;
        } finally {
          opts.onDone?.();
        }
      }),
    ),
  );
  out.verdicts = results.filter((v): v is Verdict => v !== null && v !== undefined);
  return out;
}

/**
 * Phase 2 by consolidation over given judgements, as judgeRecord runs it: too few successful
 * jurors is a failed record; a failed consolidation call falls back to the merged union.
 */
export function consolidationRunner(runtime: JuryRuntime, inputs: ReadonlyMap<string, JudgeInput>, seat: ParticipantConfig, label = `consolidation by ${seat.model}`): Phase2Runner {
  const config = runtime.jury.config;
  const seated = seatWithSeed(seat);
  return {
    label,
    async run(v, judgements) {
      const ok = judgements.filter((j) => j.ok);
      const input = inputs.get(v.record_id);
      if (!input || ok.length === 0 || ok.length < minJurors(config, judgements.length)) return { defects: [], failed: true, usage: [] };
      const c = await consolidate({ gateway: runtime.jury.gateway, recordId: v.record_id, seat: seated, prompts: runtime.jury.prompts, input, propagation: config.propagation, judgements });
      return c.ok ? { defects: c.defects, failed: false, usage: c.usage } : { defects: mergedUnion(judgements), failed: false, usage: c.usage };
    },
  };
}

/**
 * Phase 2 by deliberation over given judgements: the jury is cut down to the jurors whose
 * judgements are passed (knockout) and `moderator` takes the chair (sweep); deliberation
 * itself falls back to the Phase 1 aggregate when its extraction fails.
 */
export function deliberationRunner(runtime: JuryRuntime, inputs: ReadonlyMap<string, JudgeInput>, moderator: ParticipantConfig, label = `deliberation moderated by ${moderator.model}`): Phase2Runner {
  const base = runtime.jury.config;
  return {
    label,
    async run(v, judgements) {
      const ok = judgements.filter((j) => j.ok);
      const input = inputs.get(v.record_id);
      if (!input || ok.length === 0 || ok.length < minJurors(base, judgements.length)) return { defects: [], failed: true, usage: [] };
      const seated = new Set(judgements.map((j) => j.juror_id));
      const config = { ...base, jurors: base.jurors.filter((j) => seated.has(j.id)), moderator };
      try {
        const d = await deliberate({ gateway: runtime.jury.gateway, prompts: runtime.jury.prompts, config, input, judgements });
        return { defects: d.defects, failed: false, usage: d.usage };
      } catch {
        return { defects: mergedUnion(judgements), failed: false, usage: [] };
      }
    },
  };
}
