// A reader finishes what a stopped writer left: a range whose manifest is written but whose
// parts are still under `_staging/` is published by `shards verify` and `shards list` before
// they check or list, so the range's records are readable and verify is clean.
import { describe, expect, it } from 'vitest';
import type { DeadLetterRow } from '../../schemas/outputs.js';
import { LocalObjectStore } from '../../src/pipeline/storage/object-store.js';
import { positionString } from '../../src/pipeline/positions.js';
import { ShardCommitter } from '../../src/pipeline/commit/shard-commit.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/run-setup.js';

const UNIT = 'traces+3';
const pos = (o: number) => positionString(UNIT, o, 'kafka');
const dead = (o: number): DeadLetterRow => ({ source: 'kafka', source_unit: UNIT, source_offset: o, error: 'bad', raw: '', raw_truncated: false });

/** Commits [first..last] with a store whose publish step fails, as a writer killed there leaves it. */
async function commitUnpublished(out: string, first: number, last: number): Promise<void> {
  const store = new LocalObjectStore(out);
  const stopped = Object.create(store) as LocalObjectStore;
  stopped.move = async () => {
    throw new Error('stopped between manifest and publish');
  };
  const offsets = Array.from({ length: last - first + 1 }, (_, i) => first + i);
  const req = { source: 'kafka', first: pos(first), last: pos(last), tables: { dead_letters: offsets.map(dead) }, range: { unit: UNIT, unit_token: UNIT, first_offset: first, last_offset: last, records: offsets.length } };
  await expect(new ShardCommitter(stopped).commit(req)).rejects.toThrow(/stopped between/);
  expect(await store.exists(`_commits/${pos(first)}-${pos(last)}.json`)).toBe(true);
}

describe('shards verify and list publish committed ranges still staged', () => {
  it('verify publishes, says so in one line, and finds nothing missing', async () => {
    const out = tempDir('publish-staged');
    await commitUnpublished(out, 0, 9);
    const store = new LocalObjectStore(out);
    expect(await readCommittedRows(store, 'dead_letters').catch((e: Error) => e.message)).toMatch(/ENOENT|missing|no such/i);
    const r = await runCli(['shards', 'verify', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^published 1 committed range\(s\) whose parts were still staged under .*\n/);
    expect(r.stderr).toMatch(/all match their manifests/);
    expect(await store.list('_staging/')).toEqual([]);
    expect((await readCommittedRows(store, 'dead_letters')).map((d) => Number(d.source_offset))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  }, 120_000);

  it('list publishes before it lists, so every listed file exists', async () => {
    const out = tempDir('publish-staged-list');
    await commitUnpublished(out, 10, 14);
    const r = await runCli(['shards', 'list', out, '--table', 'dead_letters']);
    expect(r.code, r.stderr).toBe(0);
    const store = new LocalObjectStore(out);
    const listed = r.stdout.trim().split('\n');
    expect(listed).toHaveLength(1);
    expect(await store.list('_staging/')).toEqual([]);
    expect((await readCommittedRows(store, 'dead_letters')).length).toBe(5);
  }, 120_000);
});
