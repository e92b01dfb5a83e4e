/**
 * Parquet files written by pyarrow (and DuckDB) with the settings real datasets use. Needs the
 * project Python (scripts/pyenv.sh): fails under CI=true without it, skips locally.
 */
import { copyFileSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync, closeSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openFileSource } from '../../connectors/file/index.js';
import { FileRangeReader } from '../../connectors/file/parquet-source.js';
import { readParquetMetadata } from '../../src/util/parquet.js';
import type { SourceItem } from '../../src/pipeline/source.js';
import { mapSourceItem } from '../../src/pipeline/record-mapping.js';
import { expectNoFdOn, fdsOpenOn, HAS_PROC } from './helpers/fds.js';
import { findPython, IS_CI, PROJECT_ROOT, runPython, skipMessage } from './helpers/python.js';

const py = await findPython();
if (!py.python && !IS_CI) console.warn(skipMessage('Parquet source tests', py.reason));

interface FileSummary {
  bytes: number;
  rows: number;
  row_groups: number;
  columns: Record<string, { codec: string; encodings: string[] }>;
}

/** The row make_parquet.py writes for index i, as mapRecord should return it. */
function expectedRecord(i: number) {
  const n = (i % 4) + 1;
  const rec: Record<string, unknown> = { id: String(i), problem: `problem ${i % 7}` };
  if (i % 5 === 0) rec.trace = `trace of ${i}`;
  if (i !== 5) rec.steps = Array.from({ length: n }, (_, j) => `step ${j} of ${i}`);
  rec.meta = {
    source: ['gsm8k', 'math', 'olympiad'][i % 3],
    difficulty: i % 10,
    tags: i % 2 ? [`t${i % 2}`, 'x'] : [],
    score: i / 4,
  };
  rec.gold = {
    error_steps: i % 3 === 0 ? [1 + (i % n)] : [],
    first_error_step: i % 3 === 0 ? 1 + (i % n) : null,
    final_answer_correct: i % 3 !== 0,
  };
  return rec;
}

async function readAll(path: string): Promise<SourceItem[]> {
  const src = await openFileSource(path);
  const out: SourceItem[] = [];
  for await (const item of src) out.push(item);
  return out;
}

describe.skipIf(!py.python && !IS_CI)('Parquet source (pyarrow-written files)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rj-parquet-'));
  let summary: Record<string, FileSummary> = {};

  beforeAll(async () => {
    if (!py.python) throw new Error(`Python with pyarrow is required under CI: ${py.reason}`);
    const script = join(PROJECT_ROOT, 'test', 'connectors', 'fixtures', 'make_parquet.py');
    summary = JSON.parse(await runPython(py.python, script, [dir, '--big'])) as Record<string, FileSummary>;
  }, 600_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('the fixture really uses dictionary encoding, ZSTD, nested lists/structs and several row groups', async () => {
    const s = summary['traces.parquet']!;
    expect(s.row_groups).toBe(3);
    expect(s.columns.problem).toEqual({ codec: 'ZSTD', encodings: expect.arrayContaining(['RLE_DICTIONARY']) });
    expect(Object.keys(s.columns)).toEqual(
      expect.arrayContaining(['steps.list.element', 'meta.source', 'meta.tags.list.element', 'gold.first_error_step']),
    );
    // hyparquet sees the same layout through our range reader
    const reader = await FileRangeReader.open(join(dir, 'traces.parquet'), { bytesRead: 0 });
    try {
      const md = await readParquetMetadata(reader);
      expect(md.row_groups.map((g) => Number(g.num_rows))).toEqual([1000, 1000, 500]);
    } finally {
      await reader.close();
    }
  });

  it.each(['traces.parquet', 'spark_like.parquet', 'duckdb.parquet'])('reads %s row by row into valid records', async (name) => {
    if (name === 'duckdb.parquet' && !summary[name]) throw new Error('duckdb missing from the project Python');
    const items = await readAll(join(dir, name));
    expect(items).toHaveLength(2500);
    expect(items.map((i) => i.position)).toEqual(items.map((_, offset) => ({ source: 'file', unit: name, offset })));
    const mapped = items.map((i) => mapSourceItem(i));
    const errors = mapped.filter((m) => !m.ok);
    expect(errors).toEqual([]);
    expect(mapped.map((m) => (m.ok ? m.record : undefined))).toEqual(items.map((_, i) => expectedRecord(i)));
  });

  it('converts INT64 to numbers when exact and to strings otherwise; timestamps to Dates', async () => {
    const [first] = await readAll(join(dir, 'traces.parquet'));
    expect(first).toMatchObject({ ok: true, raw: { id: 0, big: '1152921504606846976', created: new Date('2024-01-01T00:00:00Z') } });
    const spark = await readAll(join(dir, 'spark_like.parquet')); // INT96 timestamps
    expect(spark[1]).toMatchObject({ ok: true, raw: { created: new Date('2024-01-01T00:00:01Z') } });
  });

  it('reads lazily: 10 rows of a 200k-row file touch one row group, not the file', async () => {
    const file = join(dir, 'big.parquet');
    const size = statSync(file).size;
    expect(summary['big.parquet']!.row_groups).toBe(20);
    const src = await openFileSource(file);
    expect(await src.sizeHint()).toEqual({ totalRows: 200_000, totalBytes: size });
    const it = src[Symbol.asyncIterator]();
    for (let i = 0; i < 10; i++) {
      expect((await it.next()).value).toMatchObject({ ok: true, position: { offset: i }, raw: { id: i } });
    }
    const { bytesRead } = src.progress();
    expect(bytesRead).toBeGreaterThan(0);
    expect(bytesRead).toBeLessThan(size / 8); // one group of 20 is ~5%, plus the footer
    if (HAS_PROC) expect(fdsOpenOn(file)).toBe(1);
    await src.close();
    expect((await it.next()).done).toBe(true);
    await expectNoFdOn(file);
  });

  it('a damaged row group becomes one dead letter naming the lost rows; other groups still read', async () => {
    const file = join(dir, 'damaged.parquet');
    copyFileSync(join(dir, 'traces.parquet'), file);
    const reader = await FileRangeReader.open(file, { bytesRead: 0 });
    const md = await readParquetMetadata(reader).finally(() => reader.close());
    const col = md.row_groups[1]!.columns[2]!.meta_data!; // "problem" in group 1
    const at = Number(col.dictionary_page_offset ?? col.data_page_offset);
    const fd = openSync(file, 'r+');
    writeSync(fd, Buffer.alloc(64, 0xff), 0, 64, at);
    closeSync(fd);

    const items = await readAll(file);
    const dead = items.filter((i) => !i.ok);
    expect(dead).toHaveLength(1);
    expect(dead[0]).toMatchObject({
      position: { offset: 1000 },
      error: expect.stringMatching(/^row group 1 \(rows 1000-1999, 1000 rows lost\) unreadable: /),
    });
    expect(items.filter((i) => i.ok).map((i) => i.position.offset)).toEqual([
      ...Array.from({ length: 1000 }, (_, i) => i),
      ...Array.from({ length: 500 }, (_, i) => 2000 + i),
    ]);
  });

  it('a file that is not Parquet becomes one dead letter', async () => {
    writeFileSync(join(dir, 'fake.parquet'), 'this is not parquet');
    expect(await readAll(join(dir, 'fake.parquet'))).toEqual([
      {
        position: { source: 'file', unit: 'fake.parquet', offset: 0 },
        ok: false,
        error: expect.stringMatching(/^not a readable Parquet file: /),
        rawText: '',
        rawTextTruncated: false,
      },
    ]);
  });
});
