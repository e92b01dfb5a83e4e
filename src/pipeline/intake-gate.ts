/**
 * Intake pauses: something outside the stage (the model endpoints' health) may ask it to stop
 * pulling records for a while. The stage waits before each pull, asks a streaming source to
 * pause its units (Kafka partitions), and counts the pauses and their time in StageCounters.
 */
import type { HealthView } from '../llm/health.js';
import type { Logger } from '../util/log.js';
import { limitedLog } from '../util/repeat-limiter.js';

export interface IntakeGate {
  /** why intake must wait now (one line), or null when it may go on */
  holdReason(): string | null;
  /** called after every change that may change holdReason(); returns the unsubscribe */
  onChange(listener: () => void): () => void;
  /** the run is stopping during a hold: what waits on it gives up now instead of at its limit */
  stopWaiting?(): void;
  /** true when the hold is the run stopping (an endpoint fault), not a pause to wait out */
  stopping?(): boolean;
}

/** The gate over the model endpoints: held while any endpoint is down. */
export function endpointGate(health: HealthView, stopWaiting?: () => void): IntakeGate {
  return {
    holdReason() {
      const down = health.endpoints().filter((e) => e.state !== 'up');
      if (down.length === 0) return null;
      return down.map((e) => `endpoint "${e.name}" is ${e.state}${e.last_error ? ` (${e.last_error})` : ''}`).join('; ');
    },
    onChange: (l) => health.onChange(l),
    stopping: () => health.endpoints().some((e) => e.gave_up),
    ...(stopWaiting ? { stopWaiting } : {}),
  };
}

/** What the pause tracker updates and calls. */
export interface PauseCounters {
  pauses: number;
  paused_ms: number;
  paused: boolean;
}

export interface PauseHooks {
  /** a streaming source pauses or resumes its units */
  hold(held: boolean): void;
  /** one line when a pause begins, and one (`resumed`) when it ends */
  log(line: string, resumed: boolean): void;
  /** counters changed (a pause began or ended, or a second of one passed) */
  progress(): void;
}

/** Follows the gate: counts pauses, tells the source, and lets the pull loop wait for the gate. */
export class PauseTracker {
  private since: number | null = null;
  private before = 0;
  private wakers: Array<() => void> = [];
  private ticker: NodeJS.Timeout | undefined;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly gate: IntakeGate,
    private readonly counters: PauseCounters,
    private readonly hooks: PauseHooks,
    private readonly now: () => number = Date.now,
  ) {
    this.unsubscribe = gate.onChange(() => this.update());
    this.update();
  }

  get held(): boolean {
    return this.since !== null;
  }

  /** Resolves when the gate opens, or when `wake()` is called (stop, halt): the caller checks again. */
  async whenOpen(): Promise<void> {
    if (this.held) await new Promise<void>((resolve) => this.wakers.push(resolve));
  }

  wake(): void {
    for (const w of this.wakers.splice(0)) w();
  }

  /** Ends tracking; a pause still open is counted up to now. */
  stop(): void {
    this.unsubscribe();
    if (this.since !== null) this.counters.paused_ms = this.before + (this.now() - this.since);
    clearInterval(this.ticker);
  }

  private update(): void {
    const reason = this.gate.holdReason();
    // A fault that stops the run is no pause: the stage halts on it, with its own one line.
    if (reason !== null && this.since === null && !this.gate.stopping?.()) {
      this.since = this.now();
      this.before = this.counters.paused_ms;
      this.counters.pauses += 1;
      this.counters.paused = true;
      this.hooks.hold(true);
      this.hooks.log(`intake paused: ${reason}; in-flight records wait for it`, false);
      // Keeps paused_ms moving for the progress line and metrics while nothing else happens.
      this.ticker = setInterval(() => this.tick(), 1000);
      this.ticker.unref();
      this.hooks.progress();
    } else if (reason === null && this.since !== null) {
      const ms = this.now() - this.since;
      this.counters.paused_ms = this.before + ms;
      this.counters.paused = false;
      this.since = null;
      clearInterval(this.ticker);
      this.hooks.hold(false);
      this.hooks.log(`intake resumed after ${(ms / 1000).toFixed(1)} s: endpoints are up`, true);
      this.wake();
      this.hooks.progress();
    }
  }

  private tick(): void {
    if (this.since === null) return;
    this.counters.paused_ms = this.before + (this.now() - this.since);
    this.hooks.progress();
  }
}

export interface PauseWiring {
  /** told to pause and resume its units (Kafka partitions) */
  source: { streaming?: { hold?(held: boolean): void } | undefined };
  signal?: AbortSignal | undefined;
  log: Logger;
  progress(): void;
}

/**
 * The stage's pause tracker over `gate`, with one log line per kind of event per window (an
 * endpoint that flaps pauses and resumes often). `close` ends it and its log.
 */
export function trackPauses(gate: IntakeGate, counters: PauseCounters, w: PauseWiring): { tracker: PauseTracker; close(): void } {
  const pauses = limitedLog(w.log);
  const tracker = new PauseTracker(gate, counters, {
    hold: (held) => {
      w.source.streaming?.hold?.(held);
      // Already stopping when the outage began: nothing will wait for it to end.
      if (held && w.signal?.aborted) queueMicrotask(() => gate.stopWaiting?.());
    },
    log: (line, resumed) => (resumed ? pauses.write('info', 'intake resumed', line) : pauses.write('warn', 'intake paused', line)),
    progress: () => w.progress(),
  });
  // Stopping during an outage: the records waiting for it give up now (uncommitted) instead
  // of at the maximum outage.
  w.signal?.addEventListener('abort', () => {
    tracker.wake();
    if (tracker.held) gate.stopWaiting?.();
  }, { once: true });
  return { tracker, close: () => (tracker.stop(), pauses.close()) };
}
