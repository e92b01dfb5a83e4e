/**
 * Per-file CPU accounting, on only when RJ_TEST_CPU_LOG names a file: each test file appends one
 * JSON line with the CPU seconds of its worker and of the child processes it waited for (the
 * built CLI, Python, the model server). vitest's own report has wall time only, and on a shared
 * machine wall time says little about what a file costs.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { afterAll, expect } from 'vitest';

const TICKS = 100; // USER_HZ on Linux

/** utime, stime, cutime, cstime of this process in seconds (Linux /proc; zeros elsewhere). */
function cpuSeconds(): [number, number, number, number] {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // Fields after the parenthesised command name; utime is field 14 of the whole line.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return [f[11], f[12], f[13], f[14]].map((v) => Number(v) / TICKS) as [number, number, number, number];
  } catch {
    return [0, 0, 0, 0];
  }
}

const logPath = process.env.RJ_TEST_CPU_LOG;
if (logPath) {
  // Taken before the test file is imported, so its top-level work (e.g. finding Python) counts.
  const start = cpuSeconds();
  const t0 = Date.now();
  afterAll(() => {
    const file = relative(process.cwd(), expect.getState().testPath ?? '');
    const end = cpuSeconds();
    const d = end.map((v, i) => v - start[i]!);
    const line = { file, self_s: +(d[0]! + d[1]!).toFixed(2), children_s: +(d[2]! + d[3]!).toFixed(2), wall_s: +((Date.now() - t0) / 1000).toFixed(1) };
    appendFileSync(logPath, JSON.stringify(line) + '\n');
  });
}
