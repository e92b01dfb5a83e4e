// Issue 13 point 4: `shards list` prints exactly the files the commit manifests list (so a part
// of a range that never committed is not offered to a reader), and `shards verify` catches a
// file that is missing or differs from its manifest. pyarrow, DuckDB and polars read the list.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalObjectStore } from '../../src/pipeline/storage/object-store.js';
import { listCommitted } from '../../src/pipeline/commit/shard-commit.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/run-setup.js';
import { findPython } from './helpers.js';

const ROOT = process.cwd();

describe('shards list and verify on a local output', () => {
  const dir = tempDir('shards-cli');
  const out = join(dir, 'out');

  it('lists every committed file and only those; --table, --format and --json narrow and describe them', async () => {
    const run = await runCli(['run', '-o', out, '--range-records', '3', '--format', 'both', '--progress', 'none']);
    expect(run.code, run.stderr).toBe(0);
    const manifests = await listCommitted(new LocalObjectStore(out));
    const expected = manifests.flatMap((m) => m.files.map((f) => join(out, f.key))).sort();
    // A part of a range whose write failed: on disk, in no manifest.
    const stray = join(out, 'verdicts', 'source=file', 'part-zz+000000000000-zz+000000000009.parquet');
    mkdirSync(join(out, 'verdicts', 'source=file'), { recursive: true });
    writeFileSync(stray, 'not committed');

    const all = await runCli(['shards', 'list', out]);
    expect(all.code, all.stderr).toBe(0);
    const listed = all.stdout.trim().split('\n');
    expect([...listed].sort()).toEqual(expected);
    expect(listed).not.toContain(stray);

    const verdicts = await runCli(['shards', 'list', out, '--table', 'verdicts', '--format', 'parquet']);
    const vlist = verdicts.stdout.trim().split('\n');
    expect(vlist).toHaveLength(manifests.length);
    expect(vlist.every((p) => p.includes('/verdicts/') && p.endsWith('.parquet'))).toBe(true);

    const json = await runCli(['shards', 'list', out, '--json', '--table', 'decisions']);
    const entries = JSON.parse(json.stdout) as Array<{ table: string; format: string; rows: number; location: string; sha256: string; range: string }>;
    expect(entries.length).toBe(2 * manifests.length); // parquet and arrow
    expect(entries.reduce((n, e) => n + (e.format === 'parquet' ? e.rows : 0), 0)).toBe(8);
    expect(entries.every((e) => e.table === 'decisions' && /^[0-9a-f]{64}$/.test(e.sha256) && e.range.includes('..'))).toBe(true);

    const bad = await runCli(['shards', 'list', out, '--table', 'verdict']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--table must be one of verdicts, /);
  }, 300_000);

  it('pyarrow, DuckDB and polars read exactly the listed files', async () => {
    const probe = findPython();
    if (!probe.python) throw new Error(`Python interop environment unavailable: ${probe.error}`);
    const listed = await runCli(['shards', 'list', out, '--table', 'verdicts', '--format', 'parquet']);
    const listFile = join(dir, 'verdicts.txt');
    writeFileSync(listFile, listed.stdout);
    const seen = JSON.parse(execFileSync(probe.python, [join(ROOT, 'test/py/read_listed.py'), listFile], { encoding: 'utf8' })) as Record<string, { rows: number; ids: string[] }>;
    const ids = ['ex-001', 'ex-002', 'ex-003', 'ex-004', 'ex-005', 'ex-006', 'ex-007', 'ex-008'];
    for (const reader of ['pyarrow', 'duckdb', 'polars']) expect(seen[reader], reader).toEqual({ rows: 8, ids });
  }, 300_000);

  it('verify passes on an intact output and names each tampered or missing file, exiting 1', async () => {
    const ok = await runCli(['shards', 'verify', out]);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toBe('');
    expect(ok.stderr).toMatch(/\d+ files in 3 committed ranges checked under .*: all match their manifests/);

    const files = (await listCommitted(new LocalObjectStore(out))).flatMap((m) => m.files);
    const tampered = join(out, files.find((f) => f.table === 'verdicts' && f.format === 'parquet')!.key);
    const bytes = readFileSync(tampered);
    const mid = Math.floor(bytes.length / 2);
    bytes[mid] = bytes[mid]! ^ 0xff; // same size, other content
    writeFileSync(tampered, bytes);
    const missing = join(out, files.find((f) => f.table === 'steps' && f.format === 'arrow')!.key);
    rmSync(missing);
    const grown = join(out, files.find((f) => f.table === 'decisions' && f.format === 'parquet')!.key);
    writeFileSync(grown, Buffer.concat([readFileSync(grown), Buffer.from('x')]));

    const r = await runCli(['shards', 'verify', out]);
    expect(r.code).toBe(1);
    const lines = r.stdout.trim().split('\n').sort();
    expect(lines).toHaveLength(3);
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^${tampered.replace(/[.+]/g, '\\$&')}: sha256 [0-9a-f]{12}…, manifest says [0-9a-f]{12}… \\(range .+\\)$`)));
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^${missing.replace(/[.+]/g, '\\$&')}: missing \\(range .+\\)$`)));
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^${grown.replace(/[.+]/g, '\\$&')}: size \\d+ bytes, manifest says \\d+ \\(range .+\\)$`)));
    expect(r.stderr).toMatch(/3 problems/);
  }, 300_000);
});
