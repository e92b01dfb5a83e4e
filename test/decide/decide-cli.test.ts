import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Bool, DateDay, Field, Float32, Int32, Int8, List, makeBuilder, RecordBatch, Schema, Struct, Table, TimeUnit, Timestamp, Uint64, Utf8 } from 'apache-arrow';
import { parquetMetadata } from 'hyparquet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { LocalObjectStore } from '../../src/pipeline/storage/object-store.js';
import { listCommitted } from '../../src/pipeline/commit/shard-commit.js';
import { toParquet } from '../../src/pipeline/commit/shard-format.js';
import { readCommittedRows, readParquetRows, type PlainRow } from '../../src/pipeline/commit/shard-read.js';
import { arrowSchemaOfParquet } from '../../src/util/parquet-arrow.js';
import { defaultProfile, startSimulator, type RunningSimulator } from '../../src/sim/index.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { runCli } from '../helpers/cli.js';

// Policy A: the shipped rules. Policy B: combined conditions over taxonomy, votes and dissent.
const POLICY_A = { rules: [{ name: 'no_verdict', error: true, decision: 'review' }, { name: 'fatal_defect', min_impact: 'fatal', decision: 'drop' }], default: 'keep' };
const POLICY_B = {
  rules: [
    { name: 'computation_major', all: [{ category: ['computation'] }, { min_impact: 'major' }], decision: 'drop' },
    { name: 'weak_support', all: [{ votes_below: 3 }, { confidence_below: 0.95 }], decision: 'review' },
    { name: 'some_dissent', has_dissent: true, decision: 'review' },
    { name: 'logic_leaf', leaf: ['logic.faulty_inference', 'logic.false_math_fact'], decision: 'drop' },
    { name: 'busy', flagged_step_rate_above: 0.2, decision: 'drop' },
  ],
  default: 'keep',
};

const sortById = <T extends Record<string, unknown>>(rows: T[]): T[] => [...rows].sort((a, b) => String(a.record_id).localeCompare(String(b.record_id)));

interface CorpusPart {
  key: string;
  rows: PlainRow[];
  /** the part's `record` column type as its Parquet schema maps to Arrow (null for JSON lines) */
  recordType: string | null;
  sha256: string;
}

/** Every committed corpus part of an output, through its manifests (nothing a glob could add). */
async function corpusParts(out: string): Promise<CorpusPart[]> {
  const store = new LocalObjectStore(out);
  const parts: CorpusPart[] = [];
  for (const m of await listCommitted(store)) {
    for (const f of m.files.filter((x) => x.table === 'corpus')) {
      const bytes = readFileSync(join(out, f.key));
      const parquet = f.format === 'parquet';
      const rows = parquet ? await readParquetRows(bytes) : bytes.toString('utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as PlainRow);
      const recordType = parquet ? String(arrowSchemaOfParquet(parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength))).fields.find((x) => x.name === 'record')!.type) : null;
      parts.push({ key: f.key, rows, recordType, sha256: f.sha256 });
    }
  }
  return parts;
}

const countBy = (rows: readonly PlainRow[]): Record<string, number> => {
  const c: Record<string, number> = {};
  for (const r of rows) c[String(r.decision)] = (c[String(r.decision)] ?? 0) + 1;
  return c;
};

/**
 * The corpus `decide` wrote into `decided` holds the decisions table's rows per decision, and the
 * same rows (record column included, same type) as the corpus of a fresh run with that policy.
 */
async function expectCorpusLikeFresh(decided: string, fresh: string, format: 'parquet' | 'jsonl'): Promise<PlainRow[]> {
  const [d, f] = await Promise.all([corpusParts(decided), corpusParts(fresh)]);
  expect(d.length).toBeGreaterThan(0);
  expect(d.map((p) => p.key)).toEqual(f.map((p) => p.key)); // one part per decision and range, the same names
  expect(d.every((p) => p.key.endsWith(`.${format}`))).toBe(true);
  const decidedRows = d.flatMap((p) => p.rows);
  const decisions = await readCommittedRows(new LocalObjectStore(decided), 'decisions');
  expect(countBy(decidedRows)).toEqual(countBy(decisions));
  expect(sortById(decidedRows).map((r) => [r.record_id, r.decision, r.reason])).toEqual(sortById(decisions).map((r) => [r.record_id, r.decision, r.reason]));
  // Same rows as the fresh run's corpus, by record_id: record, curation columns and partition.
  expect(sortById(decidedRows)).toEqual(sortById(f.flatMap((p) => p.rows)));
  for (let i = 0; i < d.length; i++) expect(d[i]!.recordType, d[i]!.key).toBe(f[i]!.recordType);
  return decidedRows;
}

/** A Parquet input with columns of many types next to the trace fields. */
function writeParquetInput(path: string, records: readonly Record<string, unknown>[]): void {
  const fields = [
    new Field('id', new Utf8(), false),
    new Field('problem', new Utf8(), false),
    new Field('trace', new Utf8(), false),
    new Field('difficulty', new Int8(), false),
    new Field('big', new Uint64(), true),
    new Field('ratio', new Float32(), false),
    new Field('flag', new Bool(), false),
    new Field('seen', new Timestamp(TimeUnit.MILLISECOND, 'UTC'), false),
    new Field('day', new DateDay(), true),
    new Field('tags', new List(new Field('item', new Utf8(), true)), false),
    new Field('info', new Struct([new Field('lang', new Utf8(), false), new Field('n', new Int32(), true)]), true),
    new Field('decision', new Utf8(), true), // named like our column and the decision= key
  ];
  const builder = makeBuilder({ type: new Struct(fields), nullValues: [null, undefined] });
  records.forEach((r, i) =>
    builder.append({
      id: r.id,
      problem: r.problem,
      trace: r.trace ?? ((r.steps as string[] | undefined) ?? []).join('\n\n'),
      difficulty: (i % 9) - 4,
      big: i % 4 === 0 ? null : 2n ** 63n + BigInt(i),
      ratio: i / 8,
      flag: i % 3 === 0,
      seen: new Date(Date.UTC(2026, 0, 1) + i * 61_000),
      day: i % 5 === 0 ? null : new Date(Date.UTC(2025, 5, 1 + i)),
      tags: ['t', String(i % 3)],
      info: i % 6 === 0 ? null : { lang: 'en', n: i % 2 ? i : null },
      decision: i % 2 ? 'gold-keep' : null,
    } as never),
  );
  writeFileSync(path, toParquet(new Table([new RecordBatch(new Schema(fields), builder.finish().flush() as never)])));
}

describe('reasoning-jury decide', () => {
  let sim: RunningSimulator;
  let dir: string;
  const config = (filter: unknown) => ({
    endpoints: { sim: { kind: 'openai', base_url: sim.url, max_retries: 8, backoff_base_ms: 1, backoff_max_ms: 20 } },
    jurors: ['a', 'b', 'c'].map((x) => ({ id: `j-${x}`, endpoint: 'sim', model: `sim-juror-${x}` })),
    consolidator: { id: 'consolidator', endpoint: 'sim', model: 'sim-consolidator' },
    mode: 'consolidation',
    taxonomy: {},
    // Shared: run B replays run A's replies, so both runs hold the same verdicts and only the
    // policy differs (the simulator is not bound to answer a repeated prompt the same way).
    cache: { enabled: true, dir: join(dir, 'cache') },
    filter,
  });
  beforeAll(async () => {
    sim = await startSimulator({ profile: defaultProfile() });
    dir = mkdtempSync(join(tmpdir(), 'rj-decide-'));
    writeFileSync(join(dir, 'in.jsonl'), syntheticRecords(60, { seed: 13, cleanShare: 0.3 }).map((r) => JSON.stringify(r)).join('\n') + '\n');
    writeFileSync(join(dir, 'a.yaml'), YAML.stringify(config(POLICY_A)));
    writeFileSync(join(dir, 'b.yaml'), YAML.stringify(config(POLICY_B)));
    writeFileSync(join(dir, 'policy-b.yaml'), YAML.stringify(POLICY_B));
  });
  afterAll(async () => {
    await sim.close();
  });

  it('with policy B reproduces the decisions of a fresh run with policy B, with zero model calls', async () => {
    const run = (cfg: string, out: string) => runCli(['run', '-c', join(dir, cfg), '-i', join(dir, 'in.jsonl'), '-o', join(dir, out), '--range-records', '16', '--progress', 'none']);
    const a = await run('a.yaml', 'out-a');
    expect(a.code, a.stderr).toBe(0);
    const callsAfterA = sim.stats().total;
    expect(callsAfterA).toBeGreaterThan(0);

    const d = await runCli(['decide', '--policy', join(dir, 'policy-b.yaml'), '--shards', join(dir, 'out-a'), '--out', join(dir, 'out-d')]);
    expect(d.code, d.stderr).toBe(0);
    // The same server that served the run saw nothing from decide.
    expect(sim.stats().total).toBe(callsAfterA);

    const b = await run('b.yaml', 'out-b');
    expect(b.code, b.stderr).toBe(0);
    const callsAfterB = sim.stats().total;
    // Same verdicts: the two runs agree on every column the policy does not shape.
    const verdicts = async (out: string) => sortById(await readCommittedRows(new LocalObjectStore(join(dir, out)), 'verdicts')).map((v) => ({ ...v, latency_ms: 0, config_hash: '' })); // the policy is part of config_hash
    expect(await verdicts('out-b')).toEqual(await verdicts('out-a'));

    const rows = async (out: string) => sortById(await readCommittedRows(new LocalObjectStore(join(dir, out)), 'decisions'));
    const [fromA, decided, fresh] = await Promise.all([rows('out-a'), rows('out-d'), rows('out-b')]);
    expect(decided).toHaveLength(60);
    expect(decided).toEqual(fresh);
    // The comparison has teeth: B decides differently from A, and several of B's rules fire.
    expect(decided.map((r) => r.decision)).not.toEqual(fromA.map((r) => r.decision));
    const fired = new Set(decided.map((r) => String(r.reason).split(':')[0]));
    expect(fired.size).toBeGreaterThanOrEqual(3);
    // The corpus (on by default) is decided again too: JSONL in, so `record` is the JSON text.
    const corpus = await expectCorpusLikeFresh(join(dir, 'out-d'), join(dir, 'out-b'), 'parquet');
    expect(corpus).toHaveLength(60);
    expect((await corpusParts(join(dir, 'out-d')))[0]!.recordType).toBe('Utf8');
    const input = new Map(readFileSync(join(dir, 'in.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => [String((JSON.parse(l) as { id: string }).id), l]));
    expect(corpus.every((r) => r.record === input.get(String(r.record_id)))).toBe(true);
    // ...and it is not the old corpus: its decisions are B's, not A's.
    const oldCorpus = sortById((await corpusParts(join(dir, 'out-a'))).flatMap((p) => p.rows));
    expect(sortById(corpus).map((r) => r.decision)).toEqual(decided.map((r) => r.decision));
    expect(sortById(corpus).map((r) => r.decision)).not.toEqual(oldCorpus.map((r) => r.decision));
    expect(d.stdout).toContain(`corpus: ${join(dir, 'out-d')}/corpus/`);
    // The same ranges, under the same names.
    const names = async (out: string) => (await listCommitted(new LocalObjectStore(join(dir, out)))).map((m) => `${m.first}-${m.last}`);
    expect(await names('out-d')).toEqual(await names('out-a'));
    expect(d.stdout).toMatch(/ranges decided\s+4 \(already in --out, skipped: 0\)/);

    // Resumable, exactly once: a second decide writes nothing new.
    const again = await runCli(['decide', '--policy', join(dir, 'policy-b.yaml'), '--shards', join(dir, 'out-a'), '--out', join(dir, 'out-d')]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/skipped: 4/);
    expect(await rows('out-d')).toEqual(decided);
    expect(sortById((await corpusParts(join(dir, 'out-d'))).flatMap((p) => p.rows))).toEqual(sortById(corpus));

    // Another policy into the same --out is refused with one line.
    const other = await runCli(['decide', '--policy', join(dir, 'a.yaml'), '--shards', join(dir, 'out-a'), '--out', join(dir, 'out-d')]);
    expect(other.code).toBe(2);
    expect(other.stderr.trim().split('\n')).toHaveLength(1);
    expect(other.stderr).toMatch(/decided with another policy/);
    // Neither the resumed nor the refused decide called a model.
    expect(sim.stats().total).toBe(callsAfterB);
  });

  // Parquet in: `record` is a Struct of the input's columns with their own types, and decide
  // writes it back with the same types, in the corpus format of the judged output.
  for (const corpus of ['parquet', 'jsonl'] as const) {
    it(`Parquet in, --corpus ${corpus}: the decided corpus equals a fresh run's with policy B, with zero model calls`, async () => {
      const input = join(dir, 'in.parquet');
      writeParquetInput(input, syntheticRecords(60, { seed: 13, cleanShare: 0.3 }));
      const run = (cfg: string, out: string) => runCli(['run', '-c', join(dir, cfg), '-i', input, '-o', join(dir, out), '--range-records', '16', '--corpus', corpus, '--progress', 'none']);
      const a = await run('a.yaml', `pq-${corpus}-a`);
      expect(a.code, a.stderr).toBe(0);
      const callsAfterA = sim.stats().total;
      const d = await runCli(['decide', '--policy', join(dir, 'policy-b.yaml'), '--shards', join(dir, `pq-${corpus}-a`), '--out', join(dir, `pq-${corpus}-d`)]);
      expect(d.code, d.stderr).toBe(0);
      expect(sim.stats().total).toBe(callsAfterA);
      const b = await run('b.yaml', `pq-${corpus}-b`);
      expect(b.code, b.stderr).toBe(0);

      const rows = await expectCorpusLikeFresh(join(dir, `pq-${corpus}-d`), join(dir, `pq-${corpus}-b`), corpus);
      expect(rows).toHaveLength(60);
      expect(new Set(rows.map((r) => r.decision)).size).toBeGreaterThan(1);
      const parts = await corpusParts(join(dir, `pq-${corpus}-d`));
      if (corpus === 'parquet') {
        expect(parts[0]!.recordType).toMatch(/^Struct<\{id:.*difficulty:Int8.*big:Uint64.*ratio:Float32.*seen:Timestamp<MILLISECOND, UTC>.*day:Date32<DAY>.*tags:List<Utf8>.*info:Struct<\{lang:Utf8, n:Int32\}>/);
        // Deterministic encoding, same rows in the same order: the very same bytes as the fresh run's parts.
        expect(parts.map((p) => p.sha256)).toEqual((await corpusParts(join(dir, `pq-${corpus}-b`))).map((p) => p.sha256));
      } else {
        expect(d.stdout).toContain(`corpus: ${join(dir, `pq-${corpus}-d`)}/jsonl/corpus/`);
      }
      const one = rows.find((r) => r.record_id === 'syn-000001')!.record as Record<string, unknown>;
      expect(one.difficulty).toBe(-3);
      expect(String(one.big)).toBe(String(2n ** 63n + 1n));
    });
  }
});
