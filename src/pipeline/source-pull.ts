/**
 * The head of the intake chain: pulls the source's items one by one and hands each to the rest
 * of intake, until the source ends or the stage must stop. Nothing new is pulled while intake
 * is held (a model endpoint or the output store is down), nor while records wait for a judge:
 * records wait in the source, not in memory.
 */
import type { PauseTracker } from './intake-gate.js';
import type { Source, SourceItem } from './source.js';
import type { IntakeHold } from './stage-options.js';

const STOP = Symbol('stop');

export interface PullDeps {
  source: Source;
  /** true once the stage must stop pulling */
  stopped(): boolean;
  /** the endpoint pause tracker, when the run has one */
  pause(): PauseTracker | null;
  intakeHold: IntakeHold | undefined;
  /** takes the item through the rest of intake (its window slot first) */
  admit(item: SourceItem): Promise<void>;
  /** records waiting for a judge, and a promise that settles when fewer than `n` do */
  waiting(): number;
  whenFewerWaiting(n: number): Promise<void>;
  progress(): void;
}

export class SourcePuller {
  /** woken when the stage must stop pulling: a commit failed for good, a halt, or the signal */
  private readonly onStop = new Set<() => void>();

  constructor(private readonly d: PullDeps) {}

  /** The stage must stop: every wait of the pull loop ends now. */
  wake(): void {
    for (const wake of [...this.onStop]) wake();
  }

  /**
   * `p`, or STOP as soon as the stage must stop. (Not Promise.race with one long-lived promise:
   * that adds a reaction to it per record, and a streaming run never lets them go.)
   */
  private unlessStopped<T>(p: Promise<T>): Promise<T | typeof STOP> {
    if (this.d.stopped()) return Promise.resolve(STOP);
    return new Promise((resolve, reject) => {
      const wake = () => resolve(STOP);
      this.onStop.add(wake);
      p.then(
        (v) => (this.onStop.delete(wake), resolve(v)),
        (e: unknown) => (this.onStop.delete(wake), reject(e)),
      );
    });
  }

  /** Pulls and admits records until the source ends or the stage must stop. */
  async pull(): Promise<void> {
    const items = this.d.source[Symbol.asyncIterator]();
    let pending: Promise<IteratorResult<SourceItem>> | null = null;
    let failed = true;
    try {
      for (;;) {
        await this.holdIntake();
        if (this.d.stopped()) break;
        pending = items.next();
        const next = await this.unlessStopped(pending);
        if (next !== STOP) pending = null;
        if (next === STOP || next.done || this.d.stopped()) break;
        await this.d.admit(next.value);
        // Keep the judging queue short: records wait in the source, not in memory.
        if (this.d.waiting() > 0) await this.unlessStopped(this.d.whenFewerWaiting(1));
      }
      failed = false;
    } finally {
      // Like a for-await exit, also when the loop threw: the source closes what it holds open (a
      // file handle left to the garbage collector fails the process on Node 26). A pull still
      // pending (a stop cut it short) is let go, and its record, never admitted, is read again by
      // the next run. After a throw, that error is the one that counts, not the closing's.
      if (pending) void pending.then(() => items.return?.()).catch(() => undefined);
      else if (failed) await Promise.resolve(items.return?.()).catch(() => undefined);
      else await items.return?.();
    }
  }

  /** While the output store or a model endpoint is down, nothing new is pulled. */
  private async holdIntake(): Promise<void> {
    const pause = this.d.pause();
    while (pause?.held && !this.d.stopped()) await this.unlessStopped(pause.whenOpen());
    const blocked = this.d.intakeHold?.blocked();
    if (!blocked) return;
    this.d.progress();
    await this.unlessStopped(blocked);
    this.d.progress();
  }
}
