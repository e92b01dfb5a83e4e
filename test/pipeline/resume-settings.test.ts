// Range boundaries and file names depend on --range-records, --range-mb and --format, so every
// manifest records them and a run that would resume with other values stops before any work.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/run-setup.js';

describe('resuming checks the range settings recorded in the manifests', () => {
  const out = join(tempDir('resume-settings'), 'out');

  it('records the settings, refuses other ones with one line, and resumes with the same ones', async () => {
    const first = await runCli(['run', '-o', out, '--range-records', '5', '--progress', 'none']);
    expect(first.code, first.stderr).toBe(0);
    const manifests = readdirSync(join(out, '_commits'));
    expect(manifests.length).toBe(2); // 8 demo records in ranges of 5
    for (const m of manifests) {
      const manifest = JSON.parse(readFileSync(join(out, '_commits', m), 'utf8'));
      expect(manifest.settings).toEqual({ max_records: 5, max_chars: 64 * 1024 * 1024, formats: ['parquet'], corpus: 'parquet' });
      expect(manifest.range).toMatchObject({ unit: 'demo.jsonl', unit_token: expect.stringMatching(/^[0-9a-f]{10}$/) });
    }

    for (const other of [['--range-records', '4'], ['--range-records', '5', '--range-mb', '32'], ['--range-records', '5', '--format', 'both'], ['--range-records', '5', '--corpus', 'jsonl']]) {
      const r = await runCli(['run', '-o', out, '--progress', 'none', ...other]);
      expect(r.code).toBe(2);
      const lines = r.stderr.trim().split('\n').filter((l) => !l.startsWith('reasoning-jury: no --input'));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/was written with --range-records 5 --range-mb 64 --format parquet --corpus parquet, this run has .*: keep the same settings to resume, or use another --out/);
    }
    expect(readdirSync(join(out, '_commits'))).toEqual(manifests); // nothing was written

    const again = await runCli(['run', '-o', out, '--range-records', '5', '--progress', 'none']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/already committed \(skipped\)\s+8/);
  }, 300_000);
});
