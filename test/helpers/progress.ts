/**
 * Waiting on progress instead of the clock. A long test on a busy machine is slow, not broken:
 * it fails only when nothing it can observe (a file growing, committed ranges, offsets, output
 * lines, CPU spent by the process doing the work) has moved for a whole stall window.
 *
 * RJ_TEST_STALL_MS sets that window (default 120 s). RJ_TEST_LONG_MS sets the vitest timeout of
 * the tests guarded this way (default 30 min): a backstop for a livelock, not the judge.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

function envMs(name: string, fallback: number): number {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v >= 1 ? Math.floor(v) : fallback;
}

export const STALL_MS = envMs('RJ_TEST_STALL_MS', 120_000);
export const LONG_TEST_MS = envMs('RJ_TEST_LONG_MS', 30 * 60_000);

/** Returns a progress mark; any change between two polls counts as progress. */
export type Probe = () => unknown;

export interface StallOptions {
  /** how long the marks may stay unchanged (default STALL_MS) */
  stallMs?: number;
  /** how often to poll (default 1 s) */
  pollMs?: number;
  /** what is being waited for, for the failure message */
  what?: string;
}

const span = (ms: number) => (ms < 10_000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`);

export class StallError extends Error {
  override name = 'StallError';
}

const markOf = (v: unknown): string => {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
};

export interface Watchdog {
  /** record progress seen outside the probe (e.g. output bytes) */
  touch(): void;
  stop(): void;
}

/**
 * Polls `probe` every pollMs and calls `onStall` once, with a readable reason, when neither the
 * probe's mark changed nor `touch()` was called for stallMs. A probe that throws counts as no
 * progress (the error goes into the reason).
 */
export function watchdog(probe: Probe, onStall: (reason: string) => void, opts: StallOptions = {}): Watchdog {
  const stallMs = opts.stallMs ?? STALL_MS;
  let last = '';
  let lastError = '';
  let moved = Date.now();
  let busy = false;
  let stopped = false;
  const timer = setInterval(() => {
    if (busy || stopped) return;
    busy = true;
    void (async () => {
      try {
        const mark = markOf(await probe());
        if (mark !== last) [last, moved] = [mark, Date.now()];
        lastError = '';
      } catch (e) {
        lastError = (e as Error).message ?? String(e);
      } finally {
        busy = false;
      }
      if (!stopped && Date.now() - moved > stallMs) {
        stop();
        const error = lastError ? `; last probe error: ${lastError}` : '';
        onStall(`${opts.what ?? 'work'}: no progress for ${span(stallMs)} (last mark ${last.slice(0, 300)}${error}); raise RJ_TEST_STALL_MS if this machine is that slow`);
      }
    })();
  }, opts.pollMs ?? 1000);
  const stop = () => {
    stopped = true;
    clearInterval(timer);
  };
  return { touch: () => void (moved = Date.now()), stop };
}

/**
 * Polls `check` until it reports done; fails with a StallError only when its progress value has
 * not changed for stallMs. The first poll is immediate.
 */
export async function waitForProgress(check: () => Promise<{ done: boolean; progress: unknown }> | { done: boolean; progress: unknown }, opts: StallOptions = {}): Promise<void> {
  const stallMs = opts.stallMs ?? STALL_MS;
  const pollMs = opts.pollMs ?? 250;
  let last: string | undefined;
  let moved = Date.now();
  for (;;) {
    const { done, progress } = await check();
    if (done) return;
    const mark = markOf(progress);
    if (mark !== last) [last, moved] = [mark, Date.now()];
    else if (Date.now() - moved > stallMs) {
      throw new StallError(`${opts.what ?? 'condition'}: no progress for ${span(stallMs)} (still at ${mark.slice(0, 300)}); raise RJ_TEST_STALL_MS if this machine is that slow`);
    }
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

/** Settles like `work`, or rejects with a StallError when `probe` stops moving first. */
export function guardProgress<T>(work: Promise<T>, probe: Probe, opts: StallOptions = {}): Promise<T> {
  let dog: Watchdog | undefined;
  const stalled = new Promise<never>((_, reject) => {
    dog = watchdog(probe, (reason) => reject(new StallError(reason)), opts);
  });
  return Promise.race([work, stalled]).finally(() => dog!.stop());
}

/** Several probes as one: progress when any of them moves. */
export const allOf =
  (...probes: Probe[]): Probe =>
  async () =>
    Promise.all(probes.map((p) => p()));

/** Names and sizes under `dir` (recursively): moves when a file is created, grows or is renamed. */
export function treeProbe(dir: string): Probe {
  const walk = (d: string, acc: { files: number; bytes: number; names: number }) => {
    let entries;
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      return acc; // not created yet, or removed mid-walk
    }
    for (const e of entries) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p, acc);
      else {
        acc.files++;
        acc.names = (acc.names * 31 + hash(e.name)) >>> 0;
        try {
          acc.bytes += statSync(p).size;
        } catch {
          // renamed between readdir and stat: the next poll sees the new name
        }
      }
    }
    return acc;
  };
  return () => walk(dir, { files: 0, bytes: 0, names: 0 });
}

function hash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (h * 33 + s.charCodeAt(i)) >>> 0;
  return h;
}

/** Size of one file (0 when it does not exist yet). */
export const fileProbe =
  (path: string): Probe =>
  () => {
    try {
      return statSync(path).size;
    } catch {
      return 0;
    }
  };

/**
 * CPU seconds spent by a process (Linux /proc), in whole `quantum`s so that a process idling on
 * timers and heartbeats does not count as working. `pid` undefined: this process (an in-process
 * model runs on this process's threads). Elsewhere than Linux the mark never moves.
 */
export function cpuProbe(pid?: number, quantumS = 1): Probe {
  return () => {
    if (pid === undefined) {
      const u = process.cpuUsage();
      return Math.floor((u.user + u.system) / 1e6 / quantumS);
    }
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return Math.floor((Number(f[11]) + Number(f[12])) / 100 / quantumS);
    } catch {
      return 'gone';
    }
  };
}
