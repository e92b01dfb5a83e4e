/**
 * The closing line of scripts/test.sh once said "0 failed" for a run with a failed file. A real
 * vitest runs the fixture suite in closing-line-fixtures/ (one file per way a run can fail)
 * with the reporter, and the counts it writes are checked exactly: every case must show.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const FIXTURES = 'test/helpers/closing-line-fixtures';
const dir = mkdtempSync(join(tmpdir(), 'rj-closing-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function runFixtures(pattern: string): Promise<{ exit: number; summary: Record<string, unknown> }> {
  const out = join(dir, `${pattern.replace(/\W/g, '_')}.json`);
  // This worker's own VITEST_* variables would make the inner vitest think it is a worker.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST')));
  let exit = 0;
  try {
    await promisify(execFile)(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', '--root', FIXTURES, '--reporter=dot', `--reporter=${process.cwd()}/test/helpers/closing-line.ts`], {
      env: { ...env, RJ_FIXTURE: pattern, RJ_TEST_SUMMARY: out },
    });
  } catch (e) {
    exit = (e as { code: number }).code;
  }
  return { exit, summary: JSON.parse(readFileSync(out, 'utf8')) as Record<string, unknown> };
}

describe('the suite closing line', () => {
  it('counts a failed test, a failed beforeAll and afterAll, a file that does not load and an unhandled error', async () => {
    const { exit, summary } = await runFixtures('*.fixture.ts');
    expect(exit).toBe(1);
    expect({ ...summary, failedFiles: (summary.failedFiles as string[]).sort() }).toEqual({
      passed: 3, // passes, failing-after-hook, unhandled
      failed: 1,
      skipped: 2, // the it.skip, and the test whose beforeAll threw
      notRun: 0,
      failedFiles: ['failing-after-hook.fixture.ts', 'failing-hook.fixture.ts', 'failing-load.fixture.ts', 'failing-test.fixture.ts'],
      fileErrors: 3,
      unhandledErrors: 1,
      interrupted: false,
      failures: 9,
      line: expect.stringMatching(/^tests: 3 passed, 1 failed, 2 skipped, failed files: 4, errors outside tests: 3, unhandled errors: 1 — .* — FAILED$/),
    });
  });

  it('says PASSED only for a run where nothing failed', async () => {
    const { exit, summary } = await runFixtures('passes.fixture.ts');
    expect(exit).toBe(0);
    expect(summary.line).toBe('tests: 1 passed, 0 failed, 1 skipped, failed files: 0, errors outside tests: 0, unhandled errors: 0 — PASSED');
  });
});
