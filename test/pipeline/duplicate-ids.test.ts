// Issue 13 point 6: a record_id seen again within a run. By default each later copy becomes a
// dead letter naming where the first was; keep_first drops later copies unjudged and lists them
// in their range's manifest; keep_all judges every copy. Counts reconcile in every case.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalObjectStore } from '../../src/pipeline/storage/object-store.js';
import { listCommitted } from '../../src/pipeline/commit/shard-commit.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { runCli } from '../helpers/cli.js';
import { fastSimConfig, tempDir } from '../helpers/run-setup.js';

const DEMO = join(process.cwd(), 'examples', 'traces', 'demo.jsonl');

/** The 8 demo records, then copies of ex-002 and ex-005 (offsets 8 and 9), then ex-002 again (10). */
function inputWithDuplicates(dir: string): string {
  const lines = readFileSync(DEMO, 'utf8').trim().split('\n');
  const path = join(dir, 'dups.jsonl');
  const copy = (i: number, note: string) => JSON.stringify({ ...JSON.parse(lines[i]!), problem: `${JSON.parse(lines[i]!).problem} ${note}` });
  writeFileSync(path, [...lines, copy(1, '(copy)'), copy(4, '(copy)'), lines[1]].join('\n') + '\n');
  return path;
}

const count = (stdout: string, label: RegExp): number => Number(stdout.match(new RegExp(`${label.source}\\s+(\\d+)`))?.[1] ?? NaN);

async function run(policy: string | null, rangeRecords = '4') {
  const dir = tempDir('dups');
  const input = inputWithDuplicates(dir);
  const out = join(dir, 'out');
  const r = await runCli(['run', '-i', input, '-o', out, '--range-records', rangeRecords, '--progress', 'none', ...(policy ? ['--duplicate-ids', policy] : [])]);
  expect(r.code, r.stderr).toBe(0);
  const store = new LocalObjectStore(out);
  return { r, out, store, input, verdicts: await readCommittedRows(store, 'verdicts'), dead: await readCommittedRows(store, 'dead_letters') };
}

describe('duplicate record ids within a run', () => {
  it('by default later copies are dead letters with a reason naming the first copy', async () => {
    const { r, verdicts, dead } = await run(null);
    expect(verdicts.map((v) => v.record_id).sort()).toEqual(['ex-001', 'ex-002', 'ex-003', 'ex-004', 'ex-005', 'ex-006', 'ex-007', 'ex-008']);
    expect(dead.map((d) => [d.source_offset, d.error])).toEqual([
      [8, 'duplicate record_id "ex-002" (first seen at dups.jsonl:1)'],
      [9, 'duplicate record_id "ex-005" (first seen at dups.jsonl:4)'],
      [10, 'duplicate record_id "ex-002" (first seen at dups.jsonl:1)'],
    ]);
    // The copy itself is kept as the dead letter's raw text.
    expect(JSON.parse(dead[0]!.raw as string).problem).toMatch(/\(copy\)$/);
    expect(count(r.stdout, /records in/)).toBe(11);
    expect(count(r.stdout, /judged/) + count(r.stdout, /dead letters/)).toBe(11);
  }, 300_000);

  it('a resumed run flags the same copies (ids of skipped, committed records are remembered)', async () => {
    const { out, input, store } = await run(null);
    const ms = await listCommitted(store);
    const lastKey = `_commits/${ms.at(-1)!.first}-${ms.at(-1)!.last}.json`;
    rmSync(join(out, lastKey)); // as if the run had died before its last commit
    const again = await runCli(['run', '-i', input, '-o', out, '--range-records', '4', '--progress', 'none']);
    expect(again.code, again.stderr).toBe(0);
    expect(count(again.stdout, /already committed \(skipped\)/)).toBe(8);
    const dead = await readCommittedRows(store, 'dead_letters');
    expect(dead.map((d) => d.source_offset)).toEqual([8, 9, 10]);
    expect(new Set((await readCommittedRows(store, 'verdicts')).map((v) => v.record_id)).size).toBe(8);
  }, 300_000);

  it('keep_first drops later copies unjudged, lists them in the manifest, and the counts still add up', async () => {
    const { r, verdicts, dead, store } = await run('keep_first');
    expect(verdicts).toHaveLength(8);
    expect(new Set(verdicts.map((v) => v.record_id)).size).toBe(8);
    expect(dead).toHaveLength(0);
    const listed = (await listCommitted(store)).flatMap((m) => m.range?.duplicates ?? []);
    expect(listed).toEqual([
      { offset: 8, record_id: 'ex-002', first_seen: 'dups.jsonl:1' },
      { offset: 9, record_id: 'ex-005', first_seen: 'dups.jsonl:4' },
      { offset: 10, record_id: 'ex-002', first_seen: 'dups.jsonl:1' },
    ]);
    expect(count(r.stdout, /later copies of a record_id dropped \(keep_first; listed in manifests\)/)).toBe(3);
    expect(count(r.stdout, /judged/) + count(r.stdout, /dead letters/) + 3).toBe(count(r.stdout, /records in/));
  }, 300_000);

  it('keep_all judges every copy', async () => {
    const { verdicts, dead } = await run('keep_all');
    expect(verdicts).toHaveLength(11);
    expect(verdicts.filter((v) => v.record_id === 'ex-002')).toHaveLength(3);
    expect(dead).toHaveLength(0);
  }, 300_000);

  it('the config key input.duplicate_ids sets the policy, and the flag overrides it', async () => {
    const dir = tempDir('dups-config');
    const input = inputWithDuplicates(dir);
    const config = fastSimConfig(dir, { input: { duplicate_ids: 'keep_all' } });
    const runWith = async (out: string, ...flag: string[]) => {
      const r = await runCli(['run', '-c', config, '-i', input, '-o', join(dir, out), '--progress', 'none', ...flag]);
      expect(r.code, r.stderr).toBe(0);
      const store = new LocalObjectStore(join(dir, out));
      return { verdicts: (await readCommittedRows(store, 'verdicts')).length, dead: (await readCommittedRows(store, 'dead_letters')).length };
    };
    expect(await runWith('a')).toEqual({ verdicts: 11, dead: 0 });
    expect(await runWith('b', '--duplicate-ids', 'dead_letter')).toEqual({ verdicts: 8, dead: 3 });
  }, 300_000);

  it('an unknown policy is one clear line', async () => {
    const r = await runCli(['run', '-o', join(tempDir('dups-bad'), 'out'), '--duplicate-ids', 'drop', '--progress', 'none']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--duplicate-ids must be dead_letter \| keep_first \| keep_all \(got "drop"\)/);
  }, 60_000);
});
