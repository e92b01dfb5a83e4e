/**
 * One writer per output (docs/layout.md, "One writer per output"): before a command touches an
 * output it takes the output's lease, renews it while it runs and releases it at a clean end.
 *
 * Taking it creates the next generation of the scope's record create-only (link(2) locally,
 * If-None-Match: * on S3), so of two starters exactly one wins, and a takeover of an expired or
 * abandoned lease is the same step: only one taker can create generation n+1. A holder that
 * finds a newer generation than its own, or whose own expiry passed without a renewal, has lost
 * the lease and writes no further manifest.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { ObjectExistsError, OutputGoneError, type ObjectStore } from '../storage/object-store.js';
import { describeHolder, encodeLease, holderDeadHere, isLive, LEASE_PREFIX, leaseKey, parseLease, parseLeaseKey, pidNamespace, scopesConflict, type LeaseRecord } from './lease-record.js';
import { ReasoningJuryError } from '../../util/errors.js';

export interface LeaseOptions {
  scope: string;
  /** the command taking it, named to whoever is refused */
  command: string;
  /** how long the lease lasts without a renewal */
  expiryMs: number;
  /** --take-over: the holder is gone, take the lease now whatever its expiry */
  takeOver?: boolean;
  /** --wait-for-lease: how long to wait for a held lease to end (0: refuse at once) */
  waitMs?: number;
  /** how often a waiting writer looks again (default: a quarter of the expiry, at most 1 s) */
  pollMs?: number;
  now?: () => number;
  signal?: AbortSignal;
}

/** Another live writer holds the output: the one line names it. Exit code 4 (README, docs/layout.md). */
export class LeaseHeldError extends ReasoningJuryError {
  /** exit 4: a script can tell "someone else is writing" from a failure */
  override get kind() {
    return 'lease' as const;
  }

  constructor(
    readonly location: string,
    readonly holder: LeaseRecord,
  ) {
    super(`${location} is being written by ${describeHolder(holder)}; nothing was changed. Wait for it with --wait-for-lease, or if that process is gone, run again with --take-over`);
    this.name = 'LeaseHeldError';
  }
}

/** The lease went to another writer (or the output went away) while this one ran. */
export class LeaseLostError extends ReasoningJuryError {
  /** exit 1 with this line as it is: what happened is said, there is nothing to debug */
  override get kind() {
    return 'output' as const;
  }

  constructor(message: string) {
    super(message);
    this.name = 'LeaseLostError';
  }
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

/** The newest record of every scope under _lease/ (older generations are history). */
async function currentLeases(store: ObjectStore): Promise<Map<string, { generation: number; record: LeaseRecord | null }>> {
  const newest = new Map<string, number>();
  for (const key of await store.list(LEASE_PREFIX)) {
    const p = parseLeaseKey(key);
    if (p && p.generation > (newest.get(p.scope) ?? 0)) newest.set(p.scope, p.generation);
  }
  const out = new Map<string, { generation: number; record: LeaseRecord | null }>();
  for (const [scope, generation] of newest) {
    const key = leaseKey(scope, generation);
    const bytes = await store.get(key);
    out.set(scope, { generation, record: bytes ? parseLease(bytes, key) : null });
  }
  return out;
}

export class OutputLease {
  private expiresAt: number;
  private timer: NodeJS.Timeout | undefined;
  private readonly lostCtl = new AbortController();
  private renewing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: ObjectStore,
    private record: LeaseRecord,
    private readonly opts: LeaseOptions,
    /** other scopes held at the same time (ranks of one split): their staged parts are not ours */
    readonly peersLive: boolean,
  ) {
    this.expiresAt = Date.parse(record.expires_at);
  }

  get key(): string {
    return leaseKey(this.record.scope, this.record.generation);
  }

  /** Aborted, with a LeaseLostError as its reason, once the lease is lost. */
  get lost(): AbortSignal {
    return this.lostCtl.signal;
  }

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  /** Renews every `everyMs` (well below the expiry) until released or lost. */
  startRenewing(everyMs = Math.max(50, Math.floor(this.opts.expiryMs / 4))): void {
    this.timer = setInterval(() => {
      this.renewing = this.renewing.then(() => this.renew());
    }, everyMs);
    this.timer.unref();
  }

  /**
   * Throws unless this writer still holds the lease: called right before each manifest. Past its
   * own expiry (a store outage, a stalled process) it renews first: no newer generation means
   * nobody took over, and the lease is extended; a newer one, or a store that still cannot be
   * reached, means no manifest from this writer.
   */
  async confirmHeld(): Promise<void> {
    if (!this.lost.aborted && this.now() >= this.expiresAt) {
      this.renewing = this.renewing.then(() => this.renew());
      await this.renewing;
      if (this.now() >= this.expiresAt) this.lose(`the lease on ${this.store.locate(this.key)} expired and could not be renewed (the store was unreachable or this process stalled); another writer may own the output now`);
    }
    if (this.lost.aborted) throw this.lost.reason as LeaseLostError;
  }

  private lose(message: string): void {
    if (this.lost.aborted) return;
    clearInterval(this.timer);
    this.lostCtl.abort(new LeaseLostError(`${message}; this command stops and writes nothing more`));
  }

  /** A newer generation means someone took over; otherwise push the expiry forward. */
  async renew(): Promise<void> {
    if (this.lost.aborted) return;
    try {
      const scope = `${LEASE_PREFIX}${this.record.scope}/`;
      const newer = (await this.store.list(scope)).map(parseLeaseKey).find((p) => p && p.generation > this.record.generation);
      if (newer) {
        const bytes = await this.store.get(leaseKey(newer.scope, newer.generation));
        const by = bytes ? parseLease(bytes, leaseKey(newer.scope, newer.generation)) : null;
        return this.lose(`the output's lease was taken over${by ? ` by ${describeHolder(by)}` : ''}`);
      }
      const expiresAt = this.now() + this.opts.expiryMs;
      const next = { ...this.record, expires_at: new Date(expiresAt).toISOString() };
      await this.store.putObject(this.key, encodeLease(next));
      this.record = next;
      this.expiresAt = expiresAt;
    } catch (err) {
      // A store that stays down is the stage's to report; a vanished folder ends the lease.
      if (err instanceof OutputGoneError) this.lose(err.message);
    }
  }

  /** A clean end: the record says released, so the next writer need not wait for the expiry. */
  async release(): Promise<void> {
    clearInterval(this.timer);
    await this.renewing;
    if (this.lost.aborted) return;
    await this.store.putObject(this.key, encodeLease({ ...this.record, released: true }));
  }
}

/** Takes the output's lease for `opts.scope`: refuses (LeaseHeldError) or waits while another live writer holds it. */
export async function acquireLease(store: ObjectStore, location: string, opts: LeaseOptions): Promise<OutputLease> {
  const now = opts.now ?? Date.now;
  const deadline = now() + (opts.waitMs ?? 0);
  const pollMs = opts.pollMs ?? Math.min(1000, Math.max(20, Math.floor(opts.expiryMs / 4)));
  const owner = randomBytes(8).toString('hex');
  for (;;) {
    const res = await tryAcquire(store, opts, owner, now);
    if ('lease' in res) return res.lease;
    if (now() >= deadline || opts.signal?.aborted) throw new LeaseHeldError(location, res.holder);
    await sleep(Math.min(pollMs, Math.max(1, deadline - now())), opts.signal);
  }
}

type Attempt = { lease: OutputLease } | { holder: LeaseRecord };

async function tryAcquire(store: ObjectStore, opts: LeaseOptions, owner: string, now: () => number): Promise<Attempt> {
  const leases = await currentLeases(store);
  // A holder that died on this machine is gone for sure: no need to wait for its expiry.
  const conflicting = [...leases.values()].filter((l) => l.record && isLive(l.record, now()) && scopesConflict(l.record.scope, opts.scope) && !holderDeadHere(l.record));
  if (conflicting.length > 0 && !opts.takeOver) return { holder: conflicting[0]!.record! };
  const generation = (leases.get(opts.scope)?.generation ?? 0) + 1;
  const record: LeaseRecord = {
    version: 1,
    scope: opts.scope,
    generation,
    owner,
    host: hostname(),
    pid: process.pid,
    ...(pidNamespace() ? { pid_ns: pidNamespace()! } : {}),
    command: opts.command,
    acquired_at: new Date(now()).toISOString(),
    expires_at: new Date(now() + opts.expiryMs).toISOString(),
  };
  const won = await createOrFindOwn(store, record);
  if (!won.ok) return { holder: won.holder };
  // Holders of other scopes that conflict: a takeover leaves them a tombstone so a zombie stops.
  if (opts.takeOver) for (const l of conflicting) if (l.record!.scope !== opts.scope) await tombstone(store, l.record!, owner);
  // Another scope taken at the same moment (a whole-output run and a rank): both stand back.
  const after = await currentLeases(store);
  const rival = [...after.values()].find((l) => l.record && l.record.scope !== opts.scope && isLive(l.record, now()) && scopesConflict(l.record.scope, opts.scope) && !holderDeadHere(l.record));
  if (rival) {
    await store.putObject(leaseKey(opts.scope, generation), encodeLease({ ...record, released: true }));
    return { holder: rival.record! };
  }
  await forgetOlder(store, opts.scope, generation);
  const peersLive = [...after.values()].some((l) => l.record && l.record.scope !== opts.scope && isLive(l.record, now()));
  return { lease: new OutputLease(store, record, opts, peersLive) };
}

/** Creates the record's generation; a retried create that landed the first time is still ours. */
async function createOrFindOwn(store: ObjectStore, record: LeaseRecord): Promise<{ ok: true } | { ok: false; holder: LeaseRecord }> {
  const key = leaseKey(record.scope, record.generation);
  try {
    await (store.createObject ? store.createObject(key, encodeLease(record)) : store.putObject(key, encodeLease(record)));
    return { ok: true };
  } catch (err) {
    if (!(err instanceof ObjectExistsError)) throw err;
    const bytes = await store.get(key);
    const there = bytes ? parseLease(bytes, key) : null;
    if (there?.owner === record.owner) return { ok: true };
    return { ok: false, holder: there ?? record };
  }
}

async function tombstone(store: ObjectStore, held: LeaseRecord, owner: string): Promise<void> {
  const key = leaseKey(held.scope, held.generation + 1);
  const stone: LeaseRecord = { ...held, generation: held.generation + 1, released: true, taken_by: owner };
  const write = store.createObject ? store.createObject(key, encodeLease(stone)) : store.putObject(key, encodeLease(stone));
  await write.catch((err: unknown) => {
    if (!(err instanceof ObjectExistsError)) throw err; // someone else moved that scope on: fine
  });
}

/** Older generations of the scope are history once a newer one is won. */
async function forgetOlder(store: ObjectStore, scope: string, generation: number): Promise<void> {
  if (!store.delete) return;
  for (const key of await store.list(`${LEASE_PREFIX}${scope}/`)) {
    const p = parseLeaseKey(key);
    if (p && p.generation < generation) await store.delete(key);
  }
}
