/**
 * What the stage does while its output store is down: every store operation that fails for a
 * transient cause (connection refused or reset, timeouts, 5xx and throttling on S3; a full
 * disk, EIO and the like locally) is retried with capped exponential backoff until the outage
 * has lasted `maxOutageMs`. One outage is shared by every operation failing at the same time:
 * its clock starts at the first failure and stops at the first success, so parallel part
 * uploads neither print a line each nor get a budget each.
 *
 * While an outage lasts the stage holds intake (`blocked()`), so records already pulled finish
 * into the window and no new ones are paid for and then lost. Clock, sleep and randomness are
 * injectable: the policy is tested without waiting.
 */
import { logger } from '../../util/log.js';
import { causeCode, causeText, formatDuration, StorageError, type StorageFailure, type StorageOp } from './storage-error.js';

export interface StorageRetryOptions {
  /** how long an outage may last before the stage gives up; 0 = no retries */
  maxOutageMs: number;
  /** first backoff delay (default 250 ms); doubles per retry up to `maxDelayMs` */
  baseDelayMs?: number;
  /** longest single wait (default 5 s): a store that is back is noticed within this */
  maxDelayMs?: number;
  /** a still-lasting outage is reported again this often (default 60 s) */
  reportEveryMs?: number;
  /** the output store (folder or s3:// URL), for messages */
  store: string;
  /** stop waiting: the run was asked to stop */
  signal?: AbortSignal;
  /** where the wait's lines go (default: this thread's `storage` logger) */
  log?: (line: string, level: 'warn' | 'info') => void;
  now?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
  /** the flag or key that sets maxOutageMs, named in the waiting line */
  setting?: string;
}

export interface StorageAttempt {
  op: StorageOp;
  key: string;
  location: string;
  /** true when the cause is an outage worth waiting out */
  transient: (err: unknown) => boolean;
  /** errors that are answers, not failures (ObjectExistsError): passed through untouched */
  passThrough?: (err: unknown) => boolean;
}

interface Outage {
  since: number;
  reportedAt: number;
  first: string;
}

const realSleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(new Error('aborted'));
    const onAbort = () => (clearTimeout(timer), reject(new Error('aborted')));
    const timer = setTimeout(() => (signal?.removeEventListener('abort', onAbort), resolve()), ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** Delay before retry `retry` (1-based): half fixed, half random, so writers do not retry in step. */
export function storageBackoff(retry: number, baseMs: number, maxMs: number, random: () => number): number {
  const exp = Math.min(maxMs, baseMs * 2 ** Math.max(0, retry - 1));
  return Math.round(exp / 2 + (exp / 2) * Math.min(1, Math.max(0, random())));
}

export class StorageRetry {
  private outage: Outage | null = null;
  /** set once the stage gave up: every operation still waiting, or started later, gives up too */
  private failed: StorageError | null = null;
  private readonly gaveUp = new AbortController();
  private readonly wakeSignal: AbortSignal;
  private waiters: Array<() => void> = [];
  private readonly now: () => number;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly random: () => number;
  private readonly log: (line: string, level: 'warn' | 'info') => void;
  /** outages seen and their total length so far, for the summary */
  readonly stats = { outages: 0, outageMs: 0 };

  constructor(private readonly opts: StorageRetryOptions) {
    this.now = opts.now ?? Date.now;
    this.sleep = opts.sleep ?? realSleep;
    this.random = opts.random ?? Math.random;
    this.log = opts.log ?? ((line, level) => logger('storage')[level](line, { path: this.opts.store }));
    this.wakeSignal = opts.signal ? AbortSignal.any([opts.signal, this.gaveUp.signal]) : this.gaveUp.signal;
  }

  get maxOutageMs(): number {
    return this.opts.maxOutageMs;
  }

  /** While the store is down: a promise that settles when it is back (or the stage gave up). */
  blocked(): Promise<void> | null {
    return this.outage ? new Promise<void>((resolve) => this.waiters.push(resolve)) : null;
  }

  /** Runs `fn` until it succeeds, fails for a cause that is not an outage, or the outage is too long. */
  async run<T>(attempt: StorageAttempt, fn: () => Promise<T>): Promise<T> {
    for (let retry = 1; ; retry++) {
      try {
        const value = await fn();
        this.recovered();
        return value;
      } catch (err) {
        if (attempt.passThrough?.(err)) {
          this.recovered(); // the store answered: it is up
          throw err;
        }
        await this.waitOrGiveUp(attempt, err, retry);
      }
    }
  }

  private async waitOrGiveUp(attempt: StorageAttempt, err: unknown, retry: number): Promise<void> {
    const fail = (why: StorageFailure['why'], waitedMs: number) =>
      new StorageError({ op: attempt.op, key: attempt.key, location: attempt.location, store: this.opts.store, code: causeCode(err), detail: causeText(err), why, waitedMs }, { cause: err });
    if (!attempt.transient(err)) throw fail('not-retryable', 0);
    const failed = () => this.failed; // re-read after awaits (TS keeps the narrowing otherwise)
    const before = failed();
    if (before) throw fail(before.failure.why, before.failure.waitedMs);
    if (this.opts.maxOutageMs <= 0) throw fail('gave-up', 0); // told not to wait: no waiting line either
    const outage = this.begin(attempt, err);
    const waited = this.now() - outage.since;
    if (waited >= this.opts.maxOutageMs) throw this.giveUp(fail('gave-up', waited));
    if (this.opts.signal?.aborted) throw this.giveUp(fail('stopped', waited));
    this.remind(outage, waited);
    const delay = Math.min(storageBackoff(retry, this.opts.baseDelayMs ?? 250, this.opts.maxDelayMs ?? 5000, this.random), this.opts.maxOutageMs - waited);
    try {
      await this.sleep(delay, this.wakeSignal);
    } catch {
      const after = failed();
      if (after) throw fail(after.failure.why, after.failure.waitedMs);
      throw this.giveUp(fail('stopped', this.now() - outage.since));
    }
  }

  private begin(attempt: StorageAttempt, err: unknown): Outage {
    if (this.outage) return this.outage;
    const now = this.now();
    this.outage = { since: now, reportedAt: now, first: attempt.location };
    this.stats.outages += 1;
    const setting = this.opts.setting ? ` (${this.opts.setting})` : '';
    this.log(`storage unavailable: could not ${attempt.op} ${attempt.location}: ${causeText(err)}; holding intake and retrying for up to ${formatDuration(this.opts.maxOutageMs)}${setting}`, 'warn');
    return this.outage;
  }

  private remind(outage: Outage, waited: number): void {
    if (this.now() - outage.reportedAt < (this.opts.reportEveryMs ?? 60_000)) return;
    outage.reportedAt = this.now();
    this.log(`storage still unavailable after ${formatDuration(waited)} (${outage.first}); giving up after ${formatDuration(this.opts.maxOutageMs)}`, 'warn');
  }

  private recovered(): void {
    if (!this.outage) return;
    const lasted = this.now() - this.outage.since;
    this.end(lasted);
    this.log(`storage available again after ${formatDuration(lasted)}; resuming intake`, 'info');
  }

  private giveUp(err: StorageError): StorageError {
    this.failed ??= err;
    if (this.outage) this.end(this.now() - this.outage.since);
    this.gaveUp.abort();
    return err;
  }

  private end(lasted: number): void {
    this.outage = null;
    this.stats.outageMs += lasted;
    for (const wake of this.waiters.splice(0)) wake();
  }
}
