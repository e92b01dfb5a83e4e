import { JudgementOutput } from '../../schemas/defect.js';
import type { ParticipantConfig } from '../../schemas/config.js';
import type { CallUsage } from '../../schemas/usage.js';
import type { Judgement } from '../../schemas/verdict.js';
import { isEndpointOutage } from '../llm/outage.js';
import { queueClock } from '../llm/queue-clock.js';
import { type ChatMessage, ModelCallError, type ModelGateway } from '../llm/types.js';
import { normalizeDefects } from './normalize.js';
import { refsCheckedFor } from './step-refs.js';

export interface Phase1Result {
  judgements: Judgement[];
  usage: CallUsage[];
}

/**
 * Independent judgements, fanned out in parallel. A wall-clock ceiling aborts jurors that hang
 * so one stuck endpoint cannot stall the record (App. F); their seats count as failed. Each
 * juror has its own ceiling, and it counts only time the juror's call is out of our hands: time
 * its attempts wait for a slot in our own limiter (max_concurrency, requests_per_second) does
 * not count, and neither does time during which an endpoint was down (`downMs`, from the
 * gateway's health view). A juror queued behind a slow single-slot server is not slow, and must
 * not lose its seat to the ceiling. Results keep the configured juror order whatever order they
 * finish in.
 */
export async function runPhase1(args: {
  gateway: ModelGateway;
  recordId: string;
  jurors: readonly ParticipantConfig[];
  messages: ChatMessage[];
  nSteps: number;
  timeoutMs: number;
  /** ms any endpoint has been down so far (monotonic); absent: outages count like any time */
  downMs?: () => number;
  /** told when a juror's call is over, whatever its outcome (Phase 1 admission, ./admission.ts) */
  onJurorDone?: (seat: ParticipantConfig) => void;
}): Promise<Phase1Result> {
  const downMs = args.downMs ?? (() => 0);
  const schema = refsCheckedFor(JudgementOutput, (v) => v.negatives, 'negatives', args.nSteps);
  const settled = await Promise.all(
    args.jurors.map(async (seat, i) => {
      const queued = queueClock();
      const ceiling = new AbortController();
      const stopCeiling = startCeiling(args.timeoutMs, () => downMs() + queued.ms(), () => ceiling.abort(new Error(`phase 1 wall-clock ceiling of ${args.timeoutMs} ms reached`)));
      try {
        const res = await args.gateway.structured({
          ctx: { record_id: args.recordId, phase: 'phase1', participant: seat.id, caller: 'jury.phase1', sample_index: i },
          seat,
          messages: args.messages,
          schema,
          schemaName: 'JudgementOutput',
          signal: ceiling.signal,
          onQueue: queued.onQueue,
        });
        const n = normalizeDefects(res.value.negatives, args.nSteps);
        const judgement: Judgement = { juror_id: seat.id, model: seat.model, ok: true, defects: n.defects, dropped_refs: n.droppedRefs + n.droppedDefects };
        return { judgement, usage: [res.usage] };
      } catch (err) {
        if (isEndpointOutage(err)) throw err;
        const usage = err instanceof ModelCallError ? [err.usage] : [];
        const message = ceiling.signal.aborted ? String((ceiling.signal.reason as Error)?.message ?? 'aborted') : (err as Error).message;
        const judgement: Judgement = { juror_id: seat.id, model: seat.model, ok: false, defects: [], dropped_refs: 0, error: message };
        return { judgement, usage };
      } finally {
        stopCeiling();
        args.onJurorDone?.(seat);
      }
    }),
  );
  return { judgements: settled.map((s) => s.judgement), usage: settled.flatMap((s) => s.usage) };
}

/**
 * Calls `expire` once `ms` of counted time has passed: wall clock less what `notCounted` (ms,
 * monotonic) grew by meanwhile. Returns the cancel.
 */
export function startCeiling(ms: number, notCounted: () => number, expire: () => void, now: () => number = Date.now): () => void {
  const t0 = now();
  const skipped0 = notCounted();
  let timer: NodeJS.Timeout;
  const check = () => {
    const left = ms - (now() - t0 - (notCounted() - skipped0));
    if (left <= 0) expire();
    else timer = setTimeout(check, Math.max(left, 50));
  };
  timer = setTimeout(check, ms);
  return () => clearTimeout(timer);
}
