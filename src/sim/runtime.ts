import type { OutputFormat } from './text.js';
import { RecentMap } from '../util/recent.js';

/** Bookkeeping shared by the HTTP server and the in-process provider. */

export type Outcome =
  | 'ok'
  /** 429 because the model's max_concurrency was reached */
  | 'rate_limited'
  /** 429 / 500 drawn from the profile's fault rates */
  | 'fault_429'
  | 'fault_500'
  /** hung on purpose (rate_timeout) */
  | 'timeout'
  /** the client left before the reply was sent (during latency) */
  | 'aborted'
  | 'bad_request'
  | 'unknown_model';

export interface SimStatsSnapshot {
  /** model -> outcome -> count */
  requests: Record<string, Partial<Record<Outcome, number>>>;
  /** model -> output format -> count, for ok replies */
  formats: Record<string, Partial<Record<OutputFormat, number>>>;
  /** task name -> requests the engine served (any outcome after task detection) */
  tasks: Record<string, number>;
  /** highest number of requests in flight at once, per model */
  max_in_flight: Record<string, number>;
  in_flight: Record<string, number>;
  /** whether requests carried an Authorization header (its value is never looked at) */
  authorization: { present: number; absent: number };
  total: number;
}

function bump<K extends string>(rec: Partial<Record<K, number>>, key: K, by = 1): void {
  rec[key] = (rec[key] ?? 0) + by;
}

export class SimRuntime {
  // Bounded: retries of one request come within seconds, a long demo must not grow forever.
  private readonly attempts = new RecentMap<number>(20_000);
  private readonly inFlight = new Map<string, number>();
  private readonly s: SimStatsSnapshot = { requests: {}, formats: {}, tasks: {}, max_in_flight: {}, in_flight: {}, authorization: { present: 0, absent: 0 }, total: 0 };

  /** 1 for the first try of this exact request (`key`: requestKey of it), 2 for the next, ... */
  nextAttempt(key: string): number {
    const n = (this.attempts.get(key) ?? 0) + 1;
    this.attempts.set(key, n);
    return n;
  }

  /** Take a slot for `model`; false when `cap` slots are already taken. */
  tryAcquire(model: string, cap: number | undefined): boolean {
    const cur = this.inFlight.get(model) ?? 0;
    if (cap !== undefined && cur >= cap) return false;
    this.inFlight.set(model, cur + 1);
    this.s.max_in_flight[model] = Math.max(this.s.max_in_flight[model] ?? 0, cur + 1);
    return true;
  }

  release(model: string): void {
    const cur = this.inFlight.get(model) ?? 0;
    if (cur <= 1) this.inFlight.delete(model);
    else this.inFlight.set(model, cur - 1);
  }

  record(model: string, outcome: Outcome, extra: { task?: string; format?: OutputFormat } = {}): void {
    this.s.total++;
    bump((this.s.requests[model] ??= {}), outcome);
    if (extra.task) bump(this.s.tasks, extra.task);
    if (extra.format) bump((this.s.formats[model] ??= {}), extra.format);
  }

  noteAuthorization(present: boolean): void {
    if (present) this.s.authorization.present++;
    else this.s.authorization.absent++;
  }

  stats(): SimStatsSnapshot {
    // A deep copy: callers may keep snapshots while traffic continues.
    const snap = structuredClone(this.s);
    snap.in_flight = Object.fromEntries(this.inFlight);
    return snap;
  }
}
