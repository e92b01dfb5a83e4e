/**
 * Keeps a burst of identical log events to two lines: the first is written, the ones after it
 * in the same window are counted, and a summary ("repeated N times in the last 10 s") follows
 * when the window ends. A broker outage otherwise prints a connection error every retry (issue
 * 14 counted 39 of them in 50 s).
 */
import type { Logger, LogFields, LogLevel } from './log.js';

export interface RepeatSummary {
  key: string;
  /** events counted but not written in the window */
  repeated: number;
  windowMs: number;
  /** the first event of the window, to write the summary beside */
  level: LogLevel;
  msg: string;
  fields: LogFields;
}

interface WindowState {
  start: number;
  repeated: number;
  level: LogLevel;
  msg: string;
  fields: LogFields;
}

export class RepeatLimiter {
  private readonly windows = new Map<string, WindowState>();

  constructor(
    readonly windowMs = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Whether this event is written; `summaries` are those of ended windows (of this key or
   * others) that were not reported yet, to be written before it.
   */
  admit(key: string, level: LogLevel, msg: string, fields: LogFields = {}): { write: boolean; summaries: RepeatSummary[] } {
    const summaries = this.due();
    const open = this.windows.get(key);
    if (open) {
      open.repeated += 1;
      return { write: false, summaries };
    }
    this.windows.set(key, { start: this.now(), repeated: 0, level, msg, fields });
    return { write: true, summaries };
  }

  /** Closes the windows that have ended; returns those in which something was held back. */
  due(): RepeatSummary[] {
    const t = this.now();
    const out: RepeatSummary[] = [];
    for (const [key, w] of this.windows) {
      if (t - w.start < this.windowMs) continue;
      this.windows.delete(key);
      if (w.repeated > 0) out.push(summaryOf(key, w, this.windowMs));
    }
    return out;
  }

  /** Closes every window now (at shutdown), whether or not it has ended. */
  flush(): RepeatSummary[] {
    const out = [...this.windows].filter(([, w]) => w.repeated > 0).map(([key, w]) => summaryOf(key, w, Math.max(0, this.now() - w.start)));
    this.windows.clear();
    return out;
  }
}

function summaryOf(key: string, w: WindowState, windowMs: number): RepeatSummary {
  return { key, repeated: w.repeated, windowMs, level: w.level, msg: w.msg, fields: w.fields };
}

export function summaryMessage(s: RepeatSummary): string {
  const seconds = Math.max(1, Math.round(s.windowMs / 1000));
  return `${s.msg} (repeated ${s.repeated} more time${s.repeated === 1 ? '' : 's'} in the last ${seconds} s)`;
}

export interface LimitedLog {
  /**
   * Writes the event unless an identical one (same `key`) was written in this window; `via`
   * writes it under another component (a child logger) than the one given to limitedLog.
   */
  write(level: LogLevel, key: string, msg: string, fields?: LogFields, via?: Logger): void;
  /** writes the summaries of windows still open (at shutdown) */
  close(): void;
}

/**
 * A logger behind a RepeatLimiter. A timer (unref'd: it never keeps the process up) writes the
 * summary of a burst that has ended even when no further event comes to trigger it.
 */
export function limitedLog(log: Logger, limiter = new RepeatLimiter()): LimitedLog {
  const writers = new Map<string, Logger>();
  const report = (list: RepeatSummary[]) => {
    for (const s of list) {
      (writers.get(s.key) ?? log)[s.level](summaryMessage(s), { ...s.fields, repeated: s.repeated });
      writers.delete(s.key);
    }
  };
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    if (timer) return;
    timer = setInterval(() => report(limiter.due()), limiter.windowMs);
    timer.unref();
  };
  return {
    write(level, key, msg, fields = {}, via = log) {
      const { write, summaries } = limiter.admit(key, level, msg, fields);
      report(summaries);
      if (write) {
        writers.set(key, via);
        via[level](msg, fields);
      }
      arm();
    },
    close() {
      if (timer) clearInterval(timer);
      timer = undefined;
      report(limiter.flush());
    },
  };
}
