/**
 * What an output lease looks like in the store (docs/layout.md, "One writer per output"):
 *
 *   _lease/<scope>/<generation, 10 digits>.json
 *
 * The newest generation of a scope is the lease; each generation is created create-only, so of
 * two writers taking the same generation exactly one wins. Scopes: `output` (the whole output,
 * every file and S3 run) and `rank-<r>-of-<n>` (one worker of an S3 input split with --rank).
 */
import { readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { z } from 'zod';

export const LEASE_PREFIX = '_lease/';
export const WHOLE_OUTPUT = 'output';

export const LeaseRecord = z.object({
  version: z.literal(1),
  scope: z.string(),
  generation: z.int().positive(),
  /** random per acquisition: tells a holder's own record from a rival's */
  owner: z.string(),
  host: z.string(),
  pid: z.int(),
  /** the holder's PID namespace (Linux): with the host, says whether `pid` can be looked up here */
  pid_ns: z.string().optional(),
  /** the command holding it (run, decide, repair run, …) */
  command: z.string(),
  acquired_at: z.string(),
  /** the holder renews before this; once it passes (holder's clock), anyone may take over */
  expires_at: z.string(),
  /** a clean end, or a tombstone left by a takeover: the scope is free */
  released: z.boolean().optional(),
  /** on a tombstone: the owner that took the lease over */
  taken_by: z.string().optional(),
});
export type LeaseRecord = z.infer<typeof LeaseRecord>;

export function leaseKey(scope: string, generation: number): string {
  return `${LEASE_PREFIX}${scope}/${String(generation).padStart(10, '0')}.json`;
}

/** scope and generation of a lease key, or null for anything else under _lease/ */
export function parseLeaseKey(key: string): { scope: string; generation: number } | null {
  const m = /^_lease\/([a-z0-9-]+)\/(\d{10})\.json$/.exec(key);
  return m ? { scope: m[1]!, generation: Number(m[2]) } : null;
}

/** `output`, or the rank's own scope when an S3 input is split among workers. */
export function leaseScope(rank: number, worldSize: number): string {
  return worldSize > 1 ? `rank-${rank}-of-${worldSize}` : WHOLE_OUTPUT;
}

/** Two scopes may be held at once only by ranks of one split (they write disjoint ranges). */
export function scopesConflict(a: string, b: string): boolean {
  if (a === b) return true;
  const split = (s: string) => /^rank-\d+-of-(\d+)$/.exec(s)?.[1];
  const na = split(a);
  const nb = split(b);
  return na === undefined || nb === undefined || na !== nb;
}

export function isLive(r: LeaseRecord, now: number): boolean {
  return !r.released && Date.parse(r.expires_at) > now;
}

export function parseLease(bytes: Uint8Array, key: string): LeaseRecord {
  try {
    return LeaseRecord.parse(JSON.parse(new TextDecoder().decode(bytes)));
  } catch (e) {
    throw new Error(`unreadable lease ${key}: ${(e as Error).message.split('\n')[0]}`);
  }
}

export const encodeLease = (r: LeaseRecord): Uint8Array => new TextEncoder().encode(`${JSON.stringify(r, null, 2)}\n`);

/** "run (pid 41 on host-a, since …, expires …)": who holds it, for the one line a refused writer prints. */
export function describeHolder(r: LeaseRecord): string {
  const scope = r.scope === WHOLE_OUTPUT ? '' : ` ${r.scope}`;
  return `${r.command}${scope} (pid ${r.pid} on ${r.host}, since ${r.acquired_at}, lease expires ${r.expires_at} unless renewed)`;
}

/** This process's PID namespace ("pid:[4026531836]"), or undefined where there is no /proc. */
export function pidNamespace(): string | undefined {
  try {
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return undefined;
  }
}

/**
 * The holder ran on this machine, in this PID namespace, and its process is gone: it died
 * without releasing (a crash, SIGKILL), and the lease need not be waited out. Anything less
 * certain (another host, another container, no /proc) is left to the expiry.
 */
export function holderDeadHere(r: LeaseRecord, ns = pidNamespace()): boolean {
  if (ns === undefined || r.pid_ns !== ns || r.host !== hostname() || r.pid === process.pid) return false;
  try {
    process.kill(r.pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
