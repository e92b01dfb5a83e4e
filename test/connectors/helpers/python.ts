/**
 * Finds the project's Python (pyarrow + duckdb) through scripts/pyenv.sh. Python-backed tests
 * must fail under CI=true when it is unavailable, and skip locally with the reason printed.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const PROJECT_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const IS_CI = process.env.CI === 'true' || process.env.CI === '1';

export interface PythonLookup {
  python?: string;
  reason?: string;
}

let cached: Promise<PythonLookup> | undefined;

export function findPython(): Promise<PythonLookup> {
  cached ??= (async () => {
    const script = join(PROJECT_ROOT, 'scripts', 'pyenv.sh');
    if (!existsSync(script)) return { reason: `${script} not found` };
    try {
      const { stdout } = await run('bash', [script], { cwd: PROJECT_ROOT, timeout: 15 * 60_000, maxBuffer: 16 << 20 });
      const python = stdout.trim().split('\n').pop()?.trim();
      if (!python || !existsSync(python)) return { reason: `scripts/pyenv.sh printed no usable python path (${JSON.stringify(stdout.slice(-200))})` };
      return { python };
    } catch (e) {
      const err = e as { stderr?: string; message: string };
      return { reason: `scripts/pyenv.sh failed: ${(err.stderr || err.message).trim().slice(-800)}` };
    }
  })();
  return cached;
}

/** Runs a Python script file with args; returns stdout. */
export async function runPython(python: string, scriptPath: string, args: string[]): Promise<string> {
  const { stdout } = await run(python, [scriptPath, ...args], { timeout: 10 * 60_000, maxBuffer: 64 << 20 });
  return stdout;
}

/** Message used when skipping locally. */
export function skipMessage(what: string, reason: string | undefined): string {
  return `SKIPPED ${what}: Python with pyarrow is unavailable (${reason}). Set CI=true to make this a failure.`;
}
