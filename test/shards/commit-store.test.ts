import { mkdtemp, readdir, rm, writeFile, mkdir } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { LocalObjectStore, MemoryObjectStore, type ObjectStore } from '../../src/pipeline/storage/object-store.js';
import { ShardCommitter, listCommitted, verifyCommitted } from '../../src/pipeline/commit/shard-commit.js';
import { corpusKey, escapePartitionValue, manifestKey, shardKey } from '../../src/pipeline/commit/layout.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { allTables, decisionRows, deadLetterRows, stepRows, verdictRows } from './synth.js';

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'rj-shards-'));
  dirs.push(d);
  return d;
}
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** Records the order of puts, to check that the manifest goes last. */
class RecordingStore implements ObjectStore {
  readonly puts: string[] = [];
  constructor(private readonly inner: ObjectStore) {}
  locate = (k: string) => this.inner.locate(k);
  exists = (k: string) => this.inner.exists(k);
  list = (p: string) => this.inner.list(p);
  get = (k: string) => this.inner.get(k);
  async putObject(key: string, bytes: Uint8Array) {
    this.puts.push(key);
    await this.inner.putObject(key, bytes);
  }
}

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array | null) => (b ? new TextDecoder().decode(b) : b);

describe('LocalObjectStore', () => {
  let root: string;
  let store: LocalObjectStore;
  beforeEach(async () => {
    root = await tempDir();
    store = new LocalObjectStore(root);
  });

  it('puts atomically, replaces, and leaves no temp files', async () => {
    await store.putObject('a/b/c.txt', enc('one'));
    await store.putObject('a/b/c.txt', enc('two'));
    expect(dec(await store.get('a/b/c.txt'))).toBe('two');
    expect(await readdir(join(root, 'a', 'b'))).toEqual(['c.txt']);
    expect(await store.exists('a/b/c.txt')).toBe(true);
    expect(await store.exists('a/b')).toBe(false); // folders are not objects
    expect(await store.get('a/b/missing')).toBeNull();
  });

  it('lists by plain string prefix, sorted, hiding temp files of a crashed writer', async () => {
    for (const k of ['defects/source=x/part-1-2.parquet', 'defects/source=x/part-3-4.parquet', 'decisions/source=x/p.parquet', 'verdicts/v.parquet']) {
      await store.putObject(k, enc(k));
    }
    await writeFile(join(root, 'defects', 'source=x', '.part-5-6.parquet.123.abc.rjtmp'), 'half');
    expect(await store.list('defects/')).toEqual(['defects/source=x/part-1-2.parquet', 'defects/source=x/part-3-4.parquet']);
    expect(await store.list('de')).toEqual(['decisions/source=x/p.parquet', 'defects/source=x/part-1-2.parquet', 'defects/source=x/part-3-4.parquet']);
    expect(await store.list('defects/source=x/part-3')).toEqual(['defects/source=x/part-3-4.parquet']);
    expect(await store.list('nothing/')).toEqual([]);
    expect((await store.list('')).length).toBe(4);
  });

  it('rejects keys that escape the root or look like temp files', async () => {
    for (const k of ['', '/abs', 'a/../b', 'a//b', './a', 'a\\b', 'x/.f.rjtmp']) {
      await expect(store.putObject(k, enc('x')), k).rejects.toThrow(/invalid object key/);
    }
  });
});

describe('naming', () => {
  it('follows out/[<format>/]<table>/source=<name>/part-<first>-<last>.<ext> and _commits/<first>-<last>.json', () => {
    expect(shardKey('defects', 'kafka', 'traces+0+00000000000000000042', 'traces+0+00000000000000000099', 'parquet')).toBe(
      'defects/source=kafka/part-traces+0+00000000000000000042-traces+0+00000000000000000099.parquet',
    );
    expect(manifestKey('a1', 'a2')).toBe('_commits/a1-a2.json');
    // Arrow IPC has its own root, so a dataset reader of out/steps/ sees Parquet only (issue 13).
    expect(shardKey('steps', 's3 bucket/α', 'f', 'l', 'arrow')).toBe('arrow/steps/source=s3%20bucket%2F%CE%B1/part-f-l.arrow');
    expect(corpusKey('drop', 'file', 'f', 'l', 'parquet')).toBe('corpus/decision=drop/source=file/part-f-l.parquet');
    expect(corpusKey('keep', 'file', 'f', 'l', 'jsonl')).toBe('jsonl/corpus/decision=keep/source=file/part-f-l.jsonl');
    expect(escapePartitionValue('my-src_1.2~x+y')).toBe('my-src_1.2~x+y');
    expect(() => shardKey('steps', 'k', 'bad/pos', 'l', 'parquet')).toThrow(/invalid first position/);
    expect(() => manifestKey('', 'x')).toThrow();
  });
});

describe.each([
  ['local', async () => new LocalObjectStore(join(await tempDir(), 'out'))],
  ['memory', async () => new MemoryObjectStore()],
] as const)('ShardCommitter on a %s store', (_kind, makeStore) => {
  it('writes every table and format, then the manifest last; reads back only committed data', async () => {
    const store = new RecordingStore(await makeStore());
    const committer = new ShardCommitter(store, { formats: ['parquet', 'arrow'], now: () => new Date('2026-01-02T03:04:05Z') });
    const tables = allTables(1);
    const { manifest, alreadyCommitted } = await committer.commit({ source: 'kafka', first: 't+0+000', last: 't+0+999', tables, extra: { next_offset: 1000 } });

    expect(alreadyCommitted).toBe(false);
    expect(store.puts.at(-1)).toBe('_commits/t+0+000-t+0+999.json');
    expect(store.puts.length).toBe(17); // 8 tables (repairs and reviews included: allTables fills them) x 2 formats + the manifest
    expect(manifest.files.map((f) => f.key)).toContain('defects/source=kafka/part-t+0+000-t+0+999.parquet');
    expect(manifest.files.map((f) => f.key)).toContain('arrow/dead_letters/source=kafka/part-t+0+000-t+0+999.arrow');
    expect(manifest.rows).toEqual({ verdicts: 2000, defects: 3000, steps: 4000, decisions: 2000, verdict_details: 1000, dead_letters: 300, repairs: 500, reviews: 200 });
    expect(manifest.record_ids).toBe(2000);
    expect(manifest.committed_at).toBe('2026-01-02T03:04:05.000Z');
    expect(manifest.extra).toEqual({ next_offset: 1000 });
    expect(await verifyCommitted(store, manifest)).toEqual([]);

    expect(await listCommitted(store)).toEqual([manifest]);
    expect(await readCommittedRows(store, 'steps')).toEqual(tables.steps);
    expect(await readCommittedRows(store, 'verdicts', 'arrow')).toEqual(tables.verdicts);
    expect(await readCommittedRows(store, 'verdict_details')).toEqual(tables.verdict_details);
    expect(await readCommittedRows(store, 'verdict_details', 'arrow')).toEqual(tables.verdict_details);
  });

  it('is idempotent: a committed range is not rewritten, and checksums are content-only', async () => {
    const store = new RecordingStore(await makeStore());
    const committer = new ShardCommitter(store);
    const req = { source: 'file', first: 'h1+0', last: 'h1+99', tables: { steps: stepRows(100), decisions: decisionRows(100) } };
    const first = await committer.commit(req);
    const puts = store.puts.length;
    const again = await committer.commit(req);
    expect(again.alreadyCommitted).toBe(true);
    expect(again.manifest).toEqual(first.manifest);
    expect(store.puts.length).toBe(puts);
    // Every table gets a part, the empty ones with zero rows (issue 13: globs never find nothing).
    expect(first.manifest.files.map((f) => [f.table, f.rows])).toEqual([['dead_letters', 0], ['decisions', 100], ['defects', 0], ['steps', 100], ['verdict_details', 0], ['verdicts', 0]]);

    // Same content under another range name: same per-file hashes (writer is deterministic).
    const other = await new ShardCommitter(await makeStore()).commit({ ...req, first: 'h1+0', last: 'h1+99' });
    expect(other.manifest.checksum).toBe(first.manifest.checksum);
  });

  it('writes nothing when any row is invalid or belongs to another source', async () => {
    const store = new RecordingStore(await makeStore());
    const committer = new ShardCommitter(store);
    const bad = { ...verdictRows(3)[2]!, n_steps: '7' } as unknown as ReturnType<typeof verdictRows>[number];
    await expect(committer.commit({ source: 'kafka', first: 'a', last: 'b', tables: { steps: stepRows(5), verdicts: [...verdictRows(2), bad] } })).rejects.toThrow(/row 2 .*n_steps/);
    await expect(committer.commit({ source: 'file', first: 'a', last: 'b', tables: { dead_letters: deadLetterRows(2, 5, 'kafka') } })).rejects.toThrow(/source/);
    expect(store.puts).toEqual([]);
    expect(await listCommitted(store)).toEqual([]);
  });

  it('detects tampered files and refuses corrupt manifests', async () => {
    const store = await makeStore();
    const { manifest } = await new ShardCommitter(store).commit({ source: 'kafka', first: 'x1', last: 'x2', tables: { decisions: decisionRows(10) } });
    await store.putObject(manifest.files[0]!.key, enc('not parquet'));
    expect(await verifyCommitted(store, manifest)).toEqual([manifest.files[0]!.key]);
    await store.putObject('_commits/y1-y2.json', enc('{"version":1}'));
    await expect(listCommitted(store)).rejects.toThrow(/corrupt commit manifest _commits\/y1-y2.json/);
  });
});

describe('ShardCommitter on disk', () => {
  it('lays files out under the output folder, with no temp files left behind', async () => {
    const out = join(await tempDir(), 'out');
    await mkdir(out);
    await new ShardCommitter(new LocalObjectStore(out), { formats: ['parquet', 'arrow'], writeEmpty: true }).commit({
      source: 'kafka',
      first: 'p0',
      last: 'p9',
      tables: { verdicts: verdictRows(10) },
    });
    // _staging/ is left empty once the parts are published; Arrow IPC has its own root.
    expect((await readdir(out)).sort()).toEqual(['_commits', '_staging', 'arrow', 'dead_letters', 'decisions', 'defects', 'steps', 'verdict_details', 'verdicts']);
    expect(await readdir(join(out, '_staging'))).toEqual([]);
    expect(await readdir(join(out, 'defects', 'source=kafka'))).toEqual(['part-p0-p9.parquet']);
    expect(await readdir(join(out, 'arrow', 'defects', 'source=kafka'))).toEqual(['part-p0-p9.arrow']);
    expect(existsSync(join(out, '_commits', 'p0-p9.json'))).toBe(true);
  });
});
