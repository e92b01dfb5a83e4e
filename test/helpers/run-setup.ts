import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import type { TraceRecord } from '../../schemas/trace.js';

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `rj-${prefix}-`));
}

export function writeJsonl(path: string, rows: readonly unknown[]): string {
  writeFileSync(path, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return path;
}

/**
 * A config whose jury is the in-process simulator with a fast, fault-free profile, so a run of
 * thousands of records takes seconds while still going through the real openai client.
 */
export function fastSimConfig(dir: string, extra: Record<string, unknown> = {}, model: Record<string, unknown> = {}): string {
  const profile = join(dir, 'profile.yaml');
  writeFileSync(profile, YAML.stringify({ seed: 9, models: { default: { latency_ms: 0, recall: 0.6, false_positive_rate: 0.05, ...model } } }));
  const config = join(dir, 'jury.yaml');
  writeFileSync(
    config,
    YAML.stringify({
      endpoints: { sim: { kind: 'simulator', profile, max_concurrency: 64 } },
      jurors: [
        { id: 'jury-0', endpoint: 'sim', model: 'sim-juror-a' },
        { id: 'jury-1', endpoint: 'sim', model: 'sim-juror-b' },
        { id: 'jury-2', endpoint: 'sim', model: 'sim-juror-c' },
      ],
      consolidator: { id: 'consolidator', endpoint: 'sim', model: 'sim-consolidator' },
      cache: { enabled: false, dir: join(dir, 'cache') },
      prices: { 'sim-juror-a': { input_per_mtok: 0.15, output_per_mtok: 0.62 } },
      ...extra,
    }),
  );
  return config;
}

let python: string | null | undefined;

/** Python with pyarrow + duckdb (scripts/pyenv.sh, asked once per test file); null when it cannot be had. */
export function pyenvPython(): string | null {
  if (python !== undefined) return python;
  try {
    python = execFileSync('bash', ['scripts/pyenv.sh'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch {
    python = null;
  }
  return python;
}

