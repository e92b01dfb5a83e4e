// Issue 13 point 5: a committed range is tied to its input's content. Editing one record of a
// committed file and running again into the same output is detected: refused with one line by
// default, or (--on-changed-input rejudge) the changed range and the file's later ranges are
// retracted and judged again, so the output holds each id once, from the new content.
import { copyFileSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalObjectStore } from '../../src/pipeline/storage/object-store.js';
import { listCommitted } from '../../src/pipeline/commit/shard-commit.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { runCli } from '../helpers/cli.js';
import { fastSimConfig, tempDir } from '../helpers/run-setup.js';
import { tracesParquet } from '../s3/helpers.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';

const DEMO = join(process.cwd(), 'examples', 'traces', 'demo.jsonl');

function manifests(out: string): Map<string, string> {
  const dir = join(out, '_commits');
  return new Map(readdirSync(dir).map((f) => [f, readFileSync(join(dir, f), 'utf8')]));
}

/** Rewrites the record at `line` (0-based) in place: same id, other problem text. */
function editRecord(path: string, line: number): void {
  const lines = readFileSync(path, 'utf8').split('\n');
  const rec = JSON.parse(lines[line]!);
  rec.problem = `${rec.problem} (edited)`;
  lines[line] = JSON.stringify(rec);
  writeFileSync(path, lines.join('\n'));
}

/** stderr without the notice that the embedded simulated jury stands in for models. */
const problems = (stderr: string) => stderr.trim().split('\n').filter((l) => !l.startsWith('reasoning-jury: no --config given'));

const args = (input: string, out: string, ...more: string[]) => ['run', '-i', input, '-o', out, '--range-records', '3', '--progress', 'none', ...more];

describe('a committed input file changed in place', () => {
  it('touching the file without changing it is not a change: everything is skipped', async () => {
    const dir = tempDir('identity-touch');
    const input = join(dir, 'traces.jsonl');
    const out = join(dir, 'out');
    copyFileSync(DEMO, input);
    expect((await runCli(args(input, out))).code).toBe(0);
    const before = manifests(out);
    for (const [, m] of before) expect(JSON.parse(m).range.content_sha256).toMatch(/^[0-9a-f]{64}$/);
    utimesSync(input, new Date(), new Date(Date.now() + 60_000));
    const again = await runCli(args(input, out));
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/already committed \(skipped\)\s+8/);
    expect(manifests(out)).toEqual(before);
  }, 300_000);

  it('by default the run stops with one line naming the file and the records, and writes nothing', async () => {
    const dir = tempDir('identity-error');
    const input = join(dir, 'traces.jsonl');
    const out = join(dir, 'out');
    copyFileSync(DEMO, input);
    expect((await runCli(args(input, out))).code).toBe(0);
    const before = manifests(out);
    expect(before.size).toBe(3); // offsets 0-2, 3-5, 6-7
    editRecord(input, 4);
    const r = await runCli(args(input, out));
    expect(r.code).toBe(2);
    const lines = problems(r.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^reasoning-jury: input traces\.jsonl changed since it was judged: records at offsets 3-5 differ from the ones committed .*--on-changed-input rejudge/);
    expect(manifests(out)).toEqual(before);
  }, 300_000);

  it('--on-changed-input rejudge retracts the changed range and the later ones, and judges them again', async () => {
    const dir = tempDir('identity-rejudge');
    const input = join(dir, 'traces.jsonl');
    const out = join(dir, 'out');
    copyFileSync(DEMO, input);
    expect((await runCli(args(input, out))).code).toBe(0);
    const before = manifests(out);
    const store = new LocalObjectStore(out);
    expect((await readCommittedRows(store, 'verdicts')).length).toBe(8);
    editRecord(input, 4);
    const r = await runCli(args(input, out, '--on-changed-input', 'rejudge'));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/input traces\.jsonl changed since it was judged: records at offsets 3-5 differ .*retracting its ranges from offset 3 on/);
    expect(r.stdout).toMatch(/already committed \(skipped\)\s+3/);
    expect(r.stdout).toMatch(/ranges retracted \(their input changed; judged again\)\s+2/);
    const after = manifests(out);
    // The unchanged first range is untouched; the other two are new manifests with new content hashes.
    const first = [...before.keys()].sort()[0]!;
    expect(after.get(first)).toBe(before.get(first));
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
    const hashOf = (m: string) => JSON.parse(m).range.content_sha256 as string;
    const changed = [...after.keys()].filter((k) => hashOf(after.get(k)!) !== hashOf(before.get(k)!));
    expect(changed).toHaveLength(1); // 3-5; 6-7 was re-judged from the same content
    const ids = (await readCommittedRows(store, 'verdicts')).map((v) => v.record_id as string);
    expect(ids.length).toBe(8);
    expect(new Set(ids).size).toBe(8);
    // A third run finds nothing changed any more.
    const third = await runCli(args(input, out));
    expect(third.code, third.stderr).toBe(0);
    expect(third.stdout).toMatch(/already committed \(skipped\)\s+8/);
    expect((await listCommitted(store)).length).toBe(3);
  }, 300_000);

  it('a file that lost records is a change too (error names the count)', async () => {
    const dir = tempDir('identity-shorter');
    const input = join(dir, 'traces.jsonl');
    const out = join(dir, 'out');
    copyFileSync(DEMO, input);
    expect((await runCli(args(input, out))).code).toBe(0);
    writeFileSync(input, readFileSync(input, 'utf8').split('\n').slice(0, 7).join('\n'));
    const r = await runCli(args(input, out));
    expect(r.code).toBe(2);
    expect(problems(r.stderr)).toHaveLength(1);
    expect(problems(r.stderr)[0]).toMatch(/^reasoning-jury: input traces\.jsonl changed since it was judged: records at offsets 6-7 were 2 when committed, now 1 are read there/);
  }, 300_000);

  it('the config key input.on_changed_input: rejudge does what the flag does', async () => {
    const dir = tempDir('identity-config');
    const input = join(dir, 'traces.jsonl');
    const out = join(dir, 'out');
    copyFileSync(DEMO, input);
    const config = fastSimConfig(dir, { input: { on_changed_input: 'rejudge' } });
    expect((await runCli(args(input, out, '-c', config))).code).toBe(0);
    editRecord(input, 0);
    const r = await runCli(args(input, out, '-c', config));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/ranges retracted \(their input changed; judged again\)\s+3/);
    const refused = await runCli(args(input, out, '-c', config, '--on-changed-input', 'error'));
    expect(refused.code, refused.stderr).toBe(0); // nothing changed since the re-judge
    editRecord(input, 7);
    const refusedNow = await runCli(args(input, out, '-c', config, '--on-changed-input', 'error'));
    expect(refusedNow.code).toBe(2);
    expect(refusedNow.stderr).toMatch(/input traces\.jsonl changed since it was judged: records at offsets 6-7 differ/);
  }, 300_000);

  it('a Parquet input with one row rewritten is detected too (rows hashed by their values)', async () => {
    const dir = tempDir('identity-parquet');
    const input = join(dir, 'traces.parquet');
    const out = join(dir, 'out');
    const records = syntheticRecords(9, { seed: 5, prefix: 'pq' });
    writeFileSync(input, tracesParquet(records, 4));
    expect((await runCli(args(input, out))).code).toBe(0);
    writeFileSync(input, tracesParquet(records.map((r, i) => (i === 7 ? { ...r, problem: `${r.problem}!` } : r)), 4));
    const r = await runCli(args(input, out));
    expect(r.code).toBe(2);
    expect(problems(r.stderr)).toEqual([expect.stringMatching(/^reasoning-jury: input traces\.parquet changed since it was judged: records at offsets 6-8 differ/)]);
  }, 300_000);
});
