import { JudgementOutput } from '../../schemas/defect.js';
import type { ParticipantConfig } from '../../schemas/config.js';
import type { CallUsage } from '../../schemas/usage.js';
import type { Judgement } from '../../schemas/verdict.js';
import { isEndpointOutage } from '../llm/outage.js';
import { type ChatMessage, ModelCallError, type ModelGateway } from '../llm/types.js';
import { normalizeDefects } from './normalize.js';

export interface Phase1Result {
  judgements: Judgement[];
  usage: CallUsage[];
}

/**
 * Independent judgements, fanned out in parallel. A wall-clock ceiling aborts jurors that hang
 * so one stuck endpoint cannot stall the record (App. F); their seats count as failed. Time
 * during which an endpoint was down (`downMs`, from the gateway's health view) is not counted:
 * a record waiting out an outage is not slow, and must not lose its jurors to the ceiling.
 * Results keep the configured juror order whatever order they finish in.
 */
export async function runPhase1(args: {
  gateway: ModelGateway;
  recordId: string;
  jurors: readonly ParticipantConfig[];
  messages: ChatMessage[];
  nSteps: number;
  timeoutMs: number;
  /** ms any endpoint has been down so far (monotonic); absent: the ceiling is plain wall clock */
  downMs?: () => number;
}): Promise<Phase1Result> {
  const ceiling = new AbortController();
  const stopCeiling = startCeiling(args.timeoutMs, args.downMs ?? (() => 0), () => ceiling.abort(new Error(`phase 1 wall-clock ceiling of ${args.timeoutMs} ms reached`)));
  try {
    const settled = await Promise.all(
      args.jurors.map(async (seat, i) => {
        try {
          const res = await args.gateway.structured({
            ctx: { record_id: args.recordId, phase: 'phase1', participant: seat.id, caller: 'jury.phase1', sample_index: i },
            seat,
            messages: args.messages,
            schema: JudgementOutput,
            schemaName: 'JudgementOutput',
            signal: ceiling.signal,
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
        }
      }),
    );
    return { judgements: settled.map((s) => s.judgement), usage: settled.flatMap((s) => s.usage) };
  } finally {
    stopCeiling();
  }
}

/** Calls `expire` once `ms` of time without an endpoint outage has passed; returns the cancel. */
export function startCeiling(ms: number, downMs: () => number, expire: () => void, now: () => number = Date.now): () => void {
  const t0 = now();
  const down0 = downMs();
  let timer: NodeJS.Timeout;
  const check = () => {
    const left = ms - (now() - t0 - (downMs() - down0));
    if (left <= 0) expire();
    else timer = setTimeout(check, Math.max(left, 50));
  };
  timer = setTimeout(check, ms);
  return () => clearTimeout(timer);
}
