/**
 * The Delta log over committed ranges (src/pipeline/commit/delta/): exactly one commit per range
 * and table whoever commits, removal with time travel, checkpoints, a log rebuilt from the
 * manifests; then delta-rs and polars read what we wrote (test/py/check_delta.py).
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { SHARD_TABLES, SHARD_TABLE_NAMES, type CommitManifest } from '../../schemas/outputs.js';
import { arrowSchemaFor } from '../../src/pipeline/commit/arrow-schema.js';
import { deltaSchema } from '../../src/pipeline/commit/delta/delta-schema.js';
import { LocalObjectStore, MemoryObjectStore, type ObjectStore } from '../../src/pipeline/storage/object-store.js';
import { ShardCommitter } from '../../src/pipeline/commit/shard-commit.js';
import { RangeTableLog } from '../../src/pipeline/commit/delta/range-table-log.js';
import { DeltaLog } from '../../src/pipeline/commit/delta/delta-log.js';
import { openTableLog } from '../../src/compose/table-log.js';
import { IN_CI, ROOT, findPython } from './helpers.js';
import { allTables } from './synth.js';

const pos = (i: number) => `f0+${String(i).padStart(6, '0')}`;
const tableLog = (store: ObjectStore, checkpointInterval = 0) => new RangeTableLog(store, { checkpointInterval, engineInfo: 'reasoning-jury test' });

async function commitRanges(store: ObjectStore, n: number, log: RangeTableLog, from = 0): Promise<CommitManifest[]> {
  const c = new ShardCommitter(store, { tableLog: log });
  const out: CommitManifest[] = [];
  for (let i = from; i < from + n; i++) out.push((await c.commit({ source: 'file', first: pos(i * 10), last: pos(i * 10 + 9), tables: allTables(1, 'file') })).manifest);
  return out;
}

async function versions(store: ObjectStore, table: string): Promise<string[]> {
  return (await store.list(`${table}/_delta_log/`)).filter((k) => k.endsWith('.json'));
}

describe('Delta log over committed ranges', () => {
  it('adds each range once per table, whoever commits it and however often', async () => {
    const store = new MemoryObjectStore();
    const [m] = await commitRanges(store, 1, tableLog(store));
    // A second writer (its own cache), a retried publish and a reconcile add nothing more.
    const other = tableLog(store);
    await other.addRange(m!);
    await new ShardCommitter(store, { tableLog: other }).publish(m!);
    expect(await other.reconcile([m!])).toBe(0);
    expect(await versions(store, 'verdicts')).toEqual(['verdicts/_delta_log/00000000000000000000.json']);
    const state = await new DeltaLog(store, 'verdicts/', { checkpointInterval: 0, engineInfo: 't' }).current();
    // The table's schema is the data contract (docs/tables.md), read back from the parts' footers.
    for (const table of SHARD_TABLE_NAMES.filter((t) => t !== 'reviews' && t !== 'repairs')) {
      const s = await new DeltaLog(store, `${table}/`, { checkpointInterval: 0, engineInfo: 't' }).current();
      expect(JSON.parse(s.metaData!.schemaString), table).toEqual(deltaSchema(arrowSchemaFor(SHARD_TABLES[table]), ['source']));
    }
    expect([...state.files.keys()]).toEqual([m!.files.find((f) => f.table === 'verdicts')!.key.replace(/^verdicts\//, '').replace(/\+/g, '%2B')]);
  });

  it('racing writers of one table claim distinct versions, no gap and no duplicate', async () => {
    const store = new MemoryObjectStore();
    const ms = await commitRanges(store, 8, tableLog(store));
    const fresh = new MemoryObjectStore();
    for (const k of await store.list('')) if (!k.includes('_delta_log')) await fresh.putObject(k, (await store.get(k))!);
    // Eight writers each add every range, all at once: each range must enter once.
    await Promise.all(Array.from({ length: 8 }, () => tableLog(fresh).reconcile(ms)));
    const keys = await versions(fresh, 'verdicts');
    expect(keys.length).toBe(8);
    const state = await new DeltaLog(fresh, 'verdicts/', { checkpointInterval: 0, engineInfo: 't' }).current();
    expect(state.version).toBe(7);
    expect(state.files.size).toBe(8);
  });

  it('reads its state back through a checkpoint', async () => {
    const store = new MemoryObjectStore();
    const ms = await commitRanges(store, 5, tableLog(store, 2));
    expect(await store.get('verdicts/_delta_log/00000000000000000004.checkpoint.parquet')).not.toBeNull();
    expect(JSON.parse(new TextDecoder().decode((await store.get('verdicts/_delta_log/_last_checkpoint'))!))).toMatchObject({ version: 4 });
    // Versions before the checkpoint are not needed any more: hide them and read again.
    for (const k of await versions(store, 'verdicts')) if (!k.endsWith('4.json')) await store.delete(k);
    const state = await new DeltaLog(store, 'verdicts/', { checkpointInterval: 2, engineInfo: 't' }).current();
    expect(state.version).toBe(4);
    expect(state.files.size).toBe(5);
    expect(state.txns.size).toBe(5);
    expect(state.metaData?.partitionColumns).toEqual(['source']);
    expect(await tableLog(store, 2).reconcile(ms)).toBe(0);
  });
});

describe('a store that does not honour create-only writes', () => {
  // Some S3-compatible servers ignore If-None-Match: * and overwrite: as if createObject were putObject.
  const careless = () => {
    const store = new MemoryObjectStore();
    store.createObject = (key, bytes) => store.putObject(key, bytes);
    return store;
  };
  it('refuses Delta tables where a consumer group shares the output, with one line', async () => {
    await expect(openTableLog(careless(), 'delta', 0, { shared: true })).rejects.toThrow(/^Delta tables refused: this store does not honour create-only writes .*one instance, or --table-format none$/);
  });
  it('lets a single leased writer go on, and says why it may', async () => {
    expect(await openTableLog(careless(), 'delta', 0)).toBeDefined();
    expect(await openTableLog(new MemoryObjectStore(), 'none', 0)).toBeUndefined();
  });
});

const probe = findPython();
describe.skipIf(Boolean(probe.error) && !IN_CI)('delta-rs and polars read the tables', () => {
  let out: string;
  let report: Record<string, { version: number; rows: number; polars_rows: number; history: { operation: string }[]; rows_by_version: Record<string, number>; partition_columns: string[]; duckdb_rows: unknown }>;
  let manifests: CommitManifest[];

  beforeAll(async () => {
    if (!probe.python) throw new Error(`Python environment unavailable (CI=true): ${probe.error}`);
    out = process.env.RJ_DELTA_KEEP ?? join(await mkdtemp(join(tmpdir(), 'rj-delta-')), 'out');
    const store = new LocalObjectStore(out);
    manifests = await commitRanges(store, 3, tableLog(store, 2));
    // Retract the middle range as rejudge does, and commit its new generation.
    const log = tableLog(store, 2);
    await log.removeRange(manifests[1]!);
    await store.delete(`_commits/${manifests[1]!.first}-${manifests[1]!.last}.json`);
    manifests[1] = (await commitRanges(store, 1, log, 1))[0]!;
    report = JSON.parse(execFileSync(probe.python!, [join(ROOT, 'test/py/check_delta.py'), out, '--versions'], { encoding: 'utf8' }));
  }, 120_000);

  it('every table reads the committed rows, with time travel to before the retraction', async () => {
    for (const table of ['verdicts', 'defects', 'steps', 'decisions', 'dead_letters', 'verdict_details']) {
      const t = report[table]!;
      const rows = manifests.reduce((s, m) => s + (m.rows[table as 'verdicts'] ?? 0), 0);
      expect(t.rows, table).toBe(rows);
      expect(t.polars_rows, table).toBe(rows);
      expect(t.partition_columns).toEqual(['source']);
      // 3 adds, 1 remove, 1 add: version 2 still read the retracted generation's rows
      expect(t.version, table).toBe(4);
      expect(t.history.map((h) => h.operation)).toEqual(['STREAMING UPDATE', 'DELETE', 'STREAMING UPDATE', 'STREAMING UPDATE', 'STREAMING UPDATE']);
      expect(t.rows_by_version['2'], table).toBe(rows);
      expect(t.rows_by_version['3'], table).toBe((rows / 3) * 2);
    }
    // The retracted parts stay for older versions; the new generation has its own names.
    const names = await readdir(join(out, 'verdicts', 'source=file'));
    expect(names.filter((n) => n.includes(`${manifests[1]!.first}-`)).length).toBe(2);
    expect(await readFile(join(out, 'verdicts', '_delta_log', '_last_checkpoint'), 'utf8')).toContain('"version":4');
  });
});
