/**
 * Endpoint health: one circuit breaker per endpoint, and a read-only view of them all.
 *
 *   up       attempts go. Outage failures (./outage.ts) in a row are counted; at `failures` the
 *            endpoint is down. A success resets the count.
 *   down     attempts wait here instead of failing, holding no limiter slot and no retry. After
 *            a probe delay (doubling from probe_interval_ms up to probe_max_interval_ms) the
 *            provider's probe runs (GET /models), or, for providers without one, one waiting
 *            attempt goes out as the probe.
 *   probing  that probe is in flight. Any answer (even a 4xx: the server is reachable) brings
 *            the endpoint up and releases every waiting attempt; another outage failure puts
 *            it down again. Attempts that then fail again count towards their retries as usual,
 *            so a model that fails on a server that is up still ends as that juror's failure.
 *   failed   down longer than the run's maximum outage: every waiting and later attempt fails
 *            with EndpointOutageError, which stops the stage without committing those records.
 *
 * The clock is injectable so the state machine can be tested without waiting.
 */
import { abortReason } from './retry.js';
import { EndpointOutageError, type OutageKind } from './outage.js';

export interface BreakerPolicy {
  /** outage failures in a row that put the endpoint down */
  failures: number;
  probeIntervalMs: number;
  probeMaxIntervalMs: number;
  /**
   * The provider's own probe (GET /models). With it, the server being back decides, not one
   * waiting call: a model that fails every call on a server that serves others must not keep
   * the endpoint down. Without it, a waiting call goes out as the probe.
   */
  probe?: () => Promise<void>;
}

export interface HealthClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realClock: HealthClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

export type EndpointState = 'up' | 'down' | 'probing';

/** One endpoint as others see it (metrics, readiness, the progress line). */
export interface EndpointHealth {
  name: string;
  state: EndpointState;
  /** clock time (ms since the epoch) the endpoint entered this state */
  since_ms: number;
  /** outage failures in a row */
  failures: number;
  /** true once the endpoint stayed down longer than the maximum outage: the run is stopping */
  gave_up: boolean;
  /** times it went down, and total time down (the current outage included) */
  outages: number;
  down_ms: number;
  last_error: string | null;
}

/** Read-only health of every endpoint the gateway has used. */
export interface HealthView {
  endpoints(): EndpointHealth[];
  anyDown(): boolean;
  /** true when there are endpoints and none is up */
  allDown(): boolean;
  /** ms during which at least one endpoint was down, the current outage included */
  downMs(): number;
  /** called after every state change; returns the unsubscribe function */
  onChange(listener: () => void): () => void;
}

/** What an attempt holds while it runs: whether it is the probe of a down endpoint. */
export interface Ticket {
  probe: boolean;
}

interface Waiter {
  resolve(t: Ticket): void;
  reject(err: Error): void;
  detach(): void;
}

type Inner = EndpointState | 'failed';

export class EndpointBreaker {
  private state: Inner = 'up';
  private since: number;
  private streak = 0;
  /** set from the first trip until an attempt succeeds; max outage counts from here */
  private outageStart: number | null = null;
  private lastError: string | null = null;
  private waiters: Waiter[] = [];
  private probeDelay: number;
  private probeTimer: unknown = null;
  private giveUpTimer: unknown = null;
  private outages = 0;
  private downTotal = 0;
  private stopping = false;

  constructor(
    readonly name: string,
    private readonly policy: BreakerPolicy,
    private readonly maxOutageMs: number,
    private readonly clock: HealthClock,
    private readonly changed: () => void,
  ) {
    this.since = clock.now();
    this.probeDelay = policy.probeIntervalMs;
  }

  get isUp(): boolean {
    return this.state === 'up';
  }

  /** Resolves when an attempt may go: at once while up, else when back up or picked as the probe. */
  admit(signal?: AbortSignal): Promise<Ticket> {
    if (this.state === 'up') return Promise.resolve({ probe: false });
    if (this.state === 'failed') return Promise.reject(this.outageError());
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return new Promise<Ticket>((resolve, reject) => {
      const onAbort = () => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(abortReason(signal!));
      };
      const waiter: Waiter = { resolve, reject, detach: () => signal?.removeEventListener('abort', onAbort) };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** Whether an outage failure now would be absorbed (waited out) rather than thrown. */
  wouldAbsorb(kind: OutageKind | null): boolean {
    return kind !== null && (this.state !== 'up' || this.streak + 1 >= this.policy.failures);
  }

  /** The attempt got an answer (a reply, or an error that is the record's own). */
  answered(): void {
    this.streak = 0;
    if (this.outageStart === null && this.state === 'up') return;
    if (this.state === 'failed') return; // too late: the run is already stopping
    this.endOutage();
  }

  /**
   * The attempt failed for an outage reason. Returns 'wait' when the endpoint is (now) down and
   * the attempt should wait and go again, 'throw' when it is a lone failure for the retry loop.
   * `final`: the retry loop would give up on it; a refused connection then puts the endpoint down,
   * since a connection that cannot be made is never the record's fault.
   */
  failed(ticket: Ticket, kind: OutageKind, message: string, final: boolean): 'wait' | 'throw' {
    this.lastError = message;
    if (this.state === 'failed') return 'wait';
    if (ticket.probe) {
      this.probeDelay = Math.min(this.policy.probeMaxIntervalMs, this.probeDelay * 2);
      this.enter('down');
      this.scheduleProbe();
      return 'wait';
    }
    if (this.state !== 'up') return 'wait';
    this.streak += 1;
    if (this.streak < this.policy.failures && !(final && kind === 'connection')) return 'throw';
    this.trip();
    return 'wait';
  }

  /** The attempt was aborted by its caller; a probe that never finished is sent again later. */
  abandoned(ticket: Ticket): void {
    if (!ticket.probe || this.state !== 'probing') return;
    this.enter('down');
    this.scheduleProbe();
  }

  snapshot(): EndpointHealth {
    const failed = this.state === 'failed';
    return {
      name: this.name,
      state: this.state === 'failed' ? 'down' : this.state,
      since_ms: this.since,
      failures: this.streak,
      gave_up: failed,
      outages: this.outages,
      down_ms: this.downTotal + (this.outageStart !== null ? this.clock.now() - this.outageStart : 0),
      last_error: this.lastError,
    };
  }

  close(): void {
    this.clock.clearTimeout(this.probeTimer);
    this.clock.clearTimeout(this.giveUpTimer);
  }

  private trip(): void {
    if (this.outageStart === null) {
      this.outageStart = this.clock.now();
      this.outages += 1;
      this.giveUpTimer = this.clock.setTimeout(() => this.giveUp(), this.maxOutageMs);
    }
    this.probeDelay = this.policy.probeIntervalMs;
    this.enter('down');
    // A provider probe costs nothing: ask at once, so a burst of 5xx from a server that is
    // up (one broken model) pauses the run for a moment only.
    this.scheduleProbe(this.policy.probe ? 0 : this.probeDelay);
  }

  private scheduleProbe(ms = this.probeDelay): void {
    this.clock.clearTimeout(this.probeTimer);
    this.probeTimer = this.clock.setTimeout(() => this.probe(), ms);
  }

  private probe(): void {
    this.probeTimer = null;
    if (this.state !== 'down') return;
    if (this.policy.probe) {
      this.enter('probing');
      void this.runProbe(this.policy.probe);
      return;
    }
    const w = this.waiters.shift();
    if (w) {
      this.enter('probing');
      w.detach();
      w.resolve({ probe: true });
      return;
    }
    // Nobody waits to probe with: let attempts go again, one outage failure away from down.
    // The outage (and its max-outage deadline) only ends with an answer.
    this.streak = this.policy.failures - 1;
    this.enter('up');
  }

  private async runProbe(probe: () => Promise<void>): Promise<void> {
    try {
      await probe();
    } catch (err) {
      if (this.state !== 'probing') return; // an attempt answered meanwhile, or the run gave up
      this.lastError = (err as Error).message;
      this.enter('down');
      this.scheduleProbe();
      this.probeDelay = Math.min(this.policy.probeMaxIntervalMs, this.probeDelay * 2);
      return;
    }
    if (this.state === 'probing') this.endOutage();
  }

  private endOutage(): void {
    this.streak = 0; // the server answered: failures from now on start a new count
    if (this.outageStart !== null) this.downTotal += this.clock.now() - this.outageStart;
    this.outageStart = null;
    this.clock.clearTimeout(this.probeTimer);
    this.clock.clearTimeout(this.giveUpTimer);
    this.probeTimer = this.giveUpTimer = null;
    this.probeDelay = this.policy.probeIntervalMs;
    const release = this.waiters.splice(0);
    if (this.state !== 'up') this.enter('up');
    for (const w of release) {
      w.detach();
      w.resolve({ probe: false });
    }
  }

  /**
   * Stop waiting now (the run is stopping): calls waiting for this endpoint fail with
   * EndpointOutageError instead of waiting for the maximum outage. No-op while it is up.
   */
  stopWaiting(): void {
    if (this.state === 'down' || this.state === 'probing') this.giveUp(true);
  }

  private giveUp(stopping = false): void {
    this.clock.clearTimeout(this.giveUpTimer);
    this.giveUpTimer = null;
    if (this.outageStart === null) return;
    this.clock.clearTimeout(this.probeTimer);
    this.stopping = stopping;
    this.enter('failed');
    const err = this.outageError();
    for (const w of this.waiters.splice(0)) {
      w.detach();
      w.reject(err);
    }
  }

  private outageError(): EndpointOutageError {
    return new EndpointOutageError(this.name, this.outageStart !== null ? this.clock.now() - this.outageStart : this.maxOutageMs, this.maxOutageMs, this.lastError, this.stopping);
  }

  private enter(state: Inner): void {
    if (state === this.state) return;
    this.state = state;
    this.since = this.clock.now();
    this.changed();
  }
}

/** The breakers of one gateway, and the view over them. */
export class HealthRegistry {
  private readonly breakers = new Map<string, EndpointBreaker>();
  private readonly listeners = new Set<() => void>();
  private anyDownSince: number | null = null;
  private downTotal = 0;
  readonly view: HealthView;

  constructor(
    private readonly maxOutageMs: number,
    private readonly clock: HealthClock = realClock,
  ) {
    this.view = {
      endpoints: () => [...this.breakers.values()].map((b) => b.snapshot()),
      anyDown: () => [...this.breakers.values()].some((b) => !b.isUp),
      allDown: () => this.breakers.size > 0 && [...this.breakers.values()].every((b) => !b.isUp),
      downMs: () => this.downTotal + (this.anyDownSince !== null ? this.clock.now() - this.anyDownSince : 0),
      onChange: (l) => {
        this.listeners.add(l);
        return () => this.listeners.delete(l);
      },
    };
  }

  breaker(name: string, policy: BreakerPolicy): EndpointBreaker {
    let b = this.breakers.get(name);
    if (!b) this.breakers.set(name, (b = new EndpointBreaker(name, policy, this.maxOutageMs, this.clock, () => this.changed())));
    return b;
  }

  /** The run is stopping: calls waiting for a down endpoint fail now (EndpointOutageError). */
  stopWaiting(): void {
    for (const b of this.breakers.values()) b.stopWaiting();
  }

  close(): void {
    for (const b of this.breakers.values()) b.close();
  }

  private changed(): void {
    const down = this.view.anyDown();
    const now = this.clock.now();
    if (down && this.anyDownSince === null) this.anyDownSince = now;
    if (!down && this.anyDownSince !== null) {
      this.downTotal += now - this.anyDownSince;
      this.anyDownSince = null;
    }
    for (const l of [...this.listeners]) l();
  }
}
