/**
 * Endpoint health: one circuit breaker per endpoint, and a read-only view of them all. The
 * states (docs/config.md, "Endpoint faults"):
 *
 *   up       attempts go. Outage failures (./outage.ts) in a row are counted; at `failures` the
 *            endpoint is down and an outage starts. A success resets the count.
 *   down     attempts wait here, holding no limiter slot and spending no retry. After a probe
 *            delay (doubling from probe_interval_ms up to probe_max_interval_ms) the provider's
 *            probe runs (GET /models); providers without one go to trial at once.
 *   probing  that probe is in flight. A 5xx or no answer puts the endpoint down again; any other
 *            answer only says the server is there, so it leads to trial, not up.
 *   trial    one attempt goes as the trial call (a waiting one, else the next to come); the
 *            others wait. An answer to it ends the outage: up, and every waiting attempt goes.
 *            Another outage failure puts the endpoint down again: a server whose probe answers
 *            while its calls fail (a dead engine behind a live HTTP front) stays down.
 *   failed   the run is stopping: down longer than the run's maximum outage (EndpointOutageError),
 *            or a fault waiting cannot heal (EndpointFaultError: a refused key, an unknown
 *            model). Every waiting and later attempt fails with that error, which stops the
 *            stage without committing those records.
 *
 * An outage ends only with an answer to an attempt. One that starts again within FLAP_WINDOW_MS
 * of the last one's end continues its clock, so an endpoint that flaps reaches max_outage_ms.
 * The clock is injectable so the state machine can be tested without waiting.
 */
import { abortReason } from './retry.js';
import { EndpointOutageError, type EndpointStopError } from './outage.js';

/** An outage starting this soon after the last one ended continues its max-outage clock. */
export const FLAP_WINDOW_MS = 60_000;

export interface BreakerPolicy {
  /** outage failures in a row that put the endpoint down */
  failures: number;
  probeIntervalMs: number;
  probeMaxIntervalMs: number;
  /**
   * The provider's own probe (GET /models): a cheap check that the server is there before a
   * trial call is spent on it. Without it, the trial call goes after the probe delay.
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
  /** `probing` also while a trial call is out; a trial nobody has taken yet shows `up` */
  state: EndpointState;
  /** clock time (ms since the epoch) the endpoint entered this state */
  since_ms: number;
  /** outage failures in a row */
  failures: number;
  /** true once the run is stopping because of this endpoint (outage too long, or a fault) */
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

/** What an attempt holds while it runs: whether it is the trial call of a down endpoint. */
export interface Ticket {
  probe: boolean;
}

interface Waiter {
  resolve(t: Ticket): void;
  reject(err: Error): void;
  detach(): void;
}

type Inner = 'up' | 'down' | 'probing' | 'trial' | 'failed';

export class EndpointBreaker {
  private state: Inner = 'up';
  private since: number;
  private streak = 0;
  /** set from the first trip until an attempt is answered; max outage counts from here */
  private outageStart: number | null = null;
  /** down time of the earlier outages of this flapping series (see FLAP_WINDOW_MS) */
  private carriedMs = 0;
  private lastEnd: number | null = null;
  private lastError: string | null = null;
  private waiters: Waiter[] = [];
  private trialOut = false;
  private probeDelay: number;
  private probeTimer: unknown = null;
  private giveUpTimer: unknown = null;
  private outages = 0;
  private downTotal = 0;
  private stopping = false;
  /** why the run stops, once it does */
  private stopError: EndpointStopError | null = null;

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
    return this.publicState() === 'up';
  }

  /** Resolves when an attempt may go: at once while up, else when back up or picked as the trial. */
  admit(signal?: AbortSignal): Promise<Ticket> {
    if (this.state === 'up') return Promise.resolve({ probe: false });
    if (this.state === 'failed') return Promise.reject(this.stopErr());
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    if (this.state === 'trial' && !this.trialOut) return Promise.resolve(this.takeTrial());
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

  /** The attempt got an answer (a reply, or an error that is the record's own). */
  answered(): void {
    this.streak = 0;
    if (this.state === 'failed') return; // too late: the run is already stopping
    if (this.outageStart === null && this.state === 'up') return;
    this.endOutage();
  }

  /** Whether an outage failure now would be the outage's (waited out) rather than the call's. */
  absorbs(ticket?: Ticket): boolean {
    return ticket?.probe === true || this.state !== 'up';
  }

  /**
   * The attempt failed for an outage reason. Returns true when the failure belongs to an outage
   * already under way (a failed trial, or an attempt sent before the endpoint went down): the
   * attempt waits and goes again without spending a retry. False while the endpoint was up:
   * the attempt spends from its call's retries, even if this failure is the one that puts the
   * endpoint down, so a call that only ever fails by itself still runs out of retries.
   * `decisive`: this one failure puts the endpoint down (the run's preflight: the only call
   * in flight, so there is no streak to wait for; a server still starting is waited for).
   */
  failed(ticket: Ticket, message: string, decisive = false): boolean {
    this.lastError = message;
    if (this.state === 'failed') return true;
    if (ticket.probe) {
      this.trialOut = false;
      this.probeDelay = Math.min(this.policy.probeMaxIntervalMs, this.probeDelay * 2);
      this.enter('down');
      this.scheduleProbe();
      return true;
    }
    if (this.state !== 'up') return true;
    this.streak += 1;
    if (this.streak >= this.policy.failures || decisive) this.trip();
    return false;
  }

  /** The attempt was aborted by its caller; a trial that never finished passes to another. */
  abandoned(ticket: Ticket): void {
    if (!ticket.probe || this.state !== 'trial') return;
    this.trialOut = false;
    this.offerTrial();
  }

  /** A fault waiting cannot heal: the run stops; every waiting and later attempt fails with it. */
  fault(err: EndpointStopError): EndpointStopError {
    if (this.state === 'failed') return this.stopErr();
    this.stopError = err;
    this.lastError = err.message;
    this.fail();
    return err;
  }

  /** Why the run stops because of this endpoint, once it does. */
  stopReason(): EndpointStopError | null {
    return this.state === 'failed' ? this.stopErr() : null;
  }

  snapshot(): EndpointHealth {
    return {
      name: this.name,
      state: this.publicState(),
      since_ms: this.since,
      failures: this.streak,
      gave_up: this.state === 'failed',
      outages: this.outages,
      down_ms: this.downTotal + (this.outageStart !== null ? this.clock.now() - this.outageStart : 0),
      last_error: this.lastError,
    };
  }

  close(): void {
    this.clock.clearTimeout(this.probeTimer);
    this.clock.clearTimeout(this.giveUpTimer);
  }

  private publicState(): EndpointState {
    if (this.state === 'failed') return 'down';
    if (this.state === 'trial') return this.trialOut || this.waiters.length > 0 ? 'probing' : 'up';
    return this.state;
  }

  private trip(): void {
    if (this.outageStart === null) {
      const now = this.clock.now();
      // Down again soon after coming back: the same outage goes on, clock included.
      if (this.lastEnd === null || now - this.lastEnd >= FLAP_WINDOW_MS) this.carriedMs = 0;
      this.outageStart = now;
      this.outages += 1;
      this.giveUpTimer = this.clock.setTimeout(() => this.giveUp(), Math.max(0, this.maxOutageMs - this.carriedMs));
    }
    this.probeDelay = this.policy.probeIntervalMs;
    this.enter('down');
    // A provider probe costs nothing: ask at once, so a burst of 5xx from a server that is
    // up pauses the run for a moment only.
    this.scheduleProbe(this.policy.probe ? 0 : this.probeDelay);
  }

  private scheduleProbe(ms = this.probeDelay): void {
    this.clock.clearTimeout(this.probeTimer);
    this.probeTimer = this.clock.setTimeout(() => this.probe(), ms);
  }

  private probe(): void {
    this.probeTimer = null;
    if (this.state !== 'down') return;
    if (!this.policy.probe) return this.startTrial();
    this.enter('probing');
    void this.runProbe(this.policy.probe);
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
    if (this.state === 'probing') this.startTrial();
  }

  private startTrial(): void {
    this.trialOut = false;
    this.state = 'trial';
    this.since = this.clock.now();
    this.offerTrial();
    this.changed();
  }

  /** The first waiting attempt goes as the trial; with none waiting, the next to come does. */
  private offerTrial(): void {
    const w = this.waiters.shift();
    if (!w) return this.changed();
    w.detach();
    w.resolve(this.takeTrial());
  }

  private takeTrial(): Ticket {
    this.trialOut = true;
    this.changed();
    return { probe: true };
  }

  private endOutage(): void {
    this.streak = 0; // the server answered: failures from now on start a new count
    if (this.outageStart !== null) {
      const now = this.clock.now();
      this.downTotal += now - this.outageStart;
      this.carriedMs += now - this.outageStart;
      this.lastEnd = now;
    }
    this.outageStart = null;
    this.trialOut = false;
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
    if (this.state === 'down' || this.state === 'probing' || this.state === 'trial') this.giveUp(true);
  }

  private giveUp(stopping = false): void {
    this.clock.clearTimeout(this.giveUpTimer);
    this.giveUpTimer = null;
    if (this.outageStart === null) return;
    this.stopping = stopping;
    this.stopError = this.outageError();
    this.fail();
  }

  private fail(): void {
    this.clock.clearTimeout(this.probeTimer);
    this.clock.clearTimeout(this.giveUpTimer);
    this.probeTimer = this.giveUpTimer = null;
    this.enter('failed');
    const err = this.stopErr();
    for (const w of this.waiters.splice(0)) {
      w.detach();
      w.reject(err);
    }
  }

  private stopErr(): EndpointStopError {
    return this.stopError ?? this.outageError();
  }

  private outageError(): EndpointOutageError {
    const downFor = this.carriedMs + (this.outageStart !== null ? this.clock.now() - this.outageStart : 0);
    return new EndpointOutageError(this.name, this.outageStart !== null ? downFor : this.maxOutageMs, this.maxOutageMs, this.lastError, this.stopping);
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
