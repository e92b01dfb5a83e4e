/**
 * A jury's core: the stage's own steps (src/pipeline/steps: intake, segment, judge, derive,
 * taxonomy, repair) run on one record at a time over an open runtime. `createJury` (./jury.ts),
 * `juryStream` (./stream.ts) and the CLI's `judge` drive it.
 */
import type { DuplicateIdPolicy, JuryConfig } from '../../schemas/config.js';
import type { TraceRecord } from '../../schemas/trace.js';
import type { Runtime } from '../compose/runtime.js';
import { type Admitted, type Dead, type Derived, deadLetter, StepChain } from '../pipeline/envelope.js';
import { type DuplicateIds, duplicateReason } from '../pipeline/duplicate-ids.js';
import { deriveStep } from '../pipeline/steps/derive.js';
import { judgeStep } from '../pipeline/steps/judge.js';
import { segmentStep } from '../pipeline/steps/segment.js';
import { endpointGate, type IntakeGate } from '../pipeline/intake-gate.js';
import type { SourceItem } from '../pipeline/source.js';
import type { IntakeSettings } from '../pipeline/record-mapping.js';
import { intake, intakeSettings, judgingSteps } from '../pipeline/steps/index.js';
import { streamEnricher } from '../taxonomy/stream.js';
import type { JuryInput } from './open-jury.js';
import { RecordError } from './record-error.js';
import type { JudgeCallOptions, Judgement, Jury, SimulatorGold } from './types.js';

/** What the stream needs of a jury besides the public methods: one record through the steps. */
export interface JuryCore {
  /**
   * A record as a source item at `index` through intake and the steps: its rows, or its dead
   * letter. With `seen` (one stream's ids so far), a later copy of an id is not judged: it is a
   * dead letter naming the first copy, unless the policy is keep_all.
   */
  run(raw: unknown, index: number, seen?: DuplicateIds): Promise<Derived | Dead>;
  /** what a later copy of a record id becomes in a stream (input.duplicate_ids; default dead_letter) */
  readonly duplicateIds: DuplicateIdPolicy;
  /** settles when no endpoint is down (intake waits on it, as the stage's does) */
  whenOpen(signal?: AbortSignal): Promise<void>;
}

const cores = new WeakMap<Jury, JuryCore>();

/** The core of a jury `createJury` made (juryStream takes a caller's jury). */
export function coreOf(jury: Jury): JuryCore {
  const core = cores.get(jury);
  if (!core) throw new TypeError('juryStream: `jury` must come from createJury');
  return core;
}

export const goldInput = (gold: SimulatorGold | undefined): JuryInput => (gold === undefined ? {} : typeof gold === 'string' ? { input: gold } : { records: gold as readonly TraceRecord[] });

/**
 * Judges with an open runtime (the CLI's `judge` opens it itself). `refine: false` stops after
 * derive: no taxonomy assignment or repair calls (what `reasoning-jury judge` has always done).
 */
export function juryOver(config: JuryConfig, runtime: Runtime, { refine = true }: { refine?: boolean } = {}): Jury {
  const steps = refine ? judgingSteps({ config, jury: runtime.jury, enrich: streamEnricher(config, runtime) }) : StepChain.from<Admitted>().then(segmentStep(config)).then(judgeStep(runtime.jury)).then(deriveStep(config));
  const core = coreFor(intakeSettings(config), steps, endpointGate(runtime.health), config.input.duplicate_ids ?? 'dead_letter');
  let closing: Promise<void> | undefined;
  const jury: Jury = {
    config,
    async judge(record: unknown, opts: JudgeCallOptions = {}): Promise<Judgement> {
      opts.signal?.throwIfAborted();
      const env = await untilAborted(core.run(record, 0), opts.signal);
      if (env.dead) throw new RecordError(`record cannot be judged: ${env.dead.error}`, env.dead);
      return judgementOf(env);
    },
    close: () => (closing ??= runtime.close()),
  };
  cores.set(jury, core);
  return jury;
}

function coreFor(settings: IntakeSettings, steps: StepChain<Admitted, Derived>, gate: IntakeGate, duplicateIds: DuplicateIdPolicy): JuryCore {
  return {
    duplicateIds,
    run(raw, index, seen) {
      const item: SourceItem = { position: { source: 'api', unit: 'records', offset: index }, ok: true, raw };
      const { env } = intake(item, settings);
      if (env.dead) return Promise.resolve(env);
      const dup = seen?.see(env);
      if (dup) return Promise.resolve({ ...env, dead: deadLetter(env.position, duplicateReason(dup), JSON.stringify(env.record)) });
      return steps.run(env);
    },
    whenOpen: (signal) => whenOpen(gate, signal),
  };
}

/** Settles once the gate holds nothing (an endpoint that was down is up again), or the run is stopping. */
function whenOpen(gate: IntakeGate, signal?: AbortSignal): Promise<void> {
  if (gate.holdReason() === null || gate.stopping?.()) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      off();
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const off = gate.onChange(() => {
      if (gate.holdReason() === null || gate.stopping?.()) done();
    });
    signal?.addEventListener('abort', done, { once: true });
  });
}

export function judgementOf(env: Derived): Judgement {
  const { verdict, defects, steps, decision } = env.rows;
  return { verdict: env.verdict, steps, decision, rows: { verdict, defects, steps, decision } };
}

/** The work goes on, but the caller stops waiting once the signal aborts. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener('abort', abort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}
