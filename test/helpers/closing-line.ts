/**
 * The suite's closing line (scripts/test.sh passes this file as a vitest reporter). Counting
 * tests alone said "0 failed" for runs that had failed: a file that does not load or whose
 * beforeAll / afterAll throws fails without failing any test (its tests are skipped or never
 * collected), and an error no test caught (a rejection nobody awaited, an uncaught exception in a
 * worker) belongs to no test at all. The line counts all three, and names the failed files.
 * With RJ_TEST_SUMMARY set, the line and the counts go to that file as JSON instead.
 */
import { writeFileSync } from 'node:fs';
import type { Reporter, SerializedError, TestModule, TestRunEndReason } from 'vitest/node';

export interface SuiteCounts {
  passed: number;
  failed: number;
  skipped: number;
  /** tests that never finished (an interrupted run) */
  notRun: number;
  failedFiles: string[];
  /** errors of a file or suite rather than a test: loading, beforeAll, afterAll */
  fileErrors: number;
  unhandledErrors: number;
  interrupted: boolean;
}

export function countSuite(modules: ReadonlyArray<TestModule>, unhandled: ReadonlyArray<SerializedError>, reason: TestRunEndReason): SuiteCounts {
  const c: SuiteCounts = { passed: 0, failed: 0, skipped: 0, notRun: 0, failedFiles: [], fileErrors: 0, unhandledErrors: unhandled.length, interrupted: reason === 'interrupted' };
  for (const m of modules) {
    for (const t of m.children.allTests()) {
      const state = t.result().state;
      if (state === 'passed') c.passed++;
      else if (state === 'failed') c.failed++;
      else if (state === 'skipped') c.skipped++;
      else c.notRun++;
    }
    c.fileErrors += m.errors().length;
    for (const s of m.children.allSuites()) c.fileErrors += s.errors().length;
    if (m.state() === 'failed' || m.errors().length > 0) c.failedFiles.push(m.relativeModuleId);
  }
  return c;
}

export const failures = (c: SuiteCounts): number => c.failed + c.notRun + c.failedFiles.length + c.fileErrors + c.unhandledErrors + (c.interrupted ? 1 : 0);

export function closingLine(c: SuiteCounts): string {
  const parts = [`tests: ${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped`];
  if (c.notRun) parts.push(`${c.notRun} not run`);
  parts.push(`failed files: ${c.failedFiles.length}`, `errors outside tests: ${c.fileErrors}`, `unhandled errors: ${c.unhandledErrors}`);
  let line = parts.join(', ');
  if (c.interrupted) line += ' (run interrupted)';
  const shown = c.failedFiles.slice(0, 5).join(' ');
  if (shown) line += ` — ${shown}${c.failedFiles.length > 5 ? ` and ${c.failedFiles.length - 5} more` : ''}`;
  return `${line} — ${failures(c) === 0 ? 'PASSED' : 'FAILED'}`;
}

export default class ClosingLine implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandled: ReadonlyArray<SerializedError>, reason: TestRunEndReason): void {
    const counts = countSuite(modules, unhandled, reason);
    const line = closingLine(counts);
    const out = process.env.RJ_TEST_SUMMARY;
    // scripts/test.sh prints the line itself once vitest has exited, so that it is the run's
    // last line (other reporters still log after this one).
    if (out) writeFileSync(out, JSON.stringify({ ...counts, failures: failures(counts), line }));
    else process.stdout.write(`\n${line}\n`);
  }
}
