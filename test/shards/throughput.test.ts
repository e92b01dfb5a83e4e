/**
 * Parquet write throughput for 100k DefectRows (validate + Arrow build + encode), ZSTD vs.
 * uncompressed. A measurement, not a gate: runs only with SHARD_BENCH=1 so the suite stays fast.
 *   SHARD_BENCH=1 npx vitest run test/shards/throughput.test.ts
 */
import { describe, expect, it } from 'vitest';
import { IMPACTS } from '../../schemas/defect.js';
import { DefectRow, defectId } from '../../schemas/outputs.js';
import { buildTable } from '../../src/pipeline/commit/arrow-schema.js';
import { toParquet } from '../../src/pipeline/commit/shard-format.js';
import { readParquetRows } from '../../src/pipeline/commit/shard-read.js';
import { defectRows, rng } from './synth.js';

const N = 100_000;

/**
 * Defects shaped like real jury output: 1-3 refs, a sentence or two of text drawn at random
 * from a vocabulary with numbers mixed in (so ZSTD sees text-like entropy, not repeats).
 */
function realisticDefects(n: number): DefectRow[] {
  const r = rng(42);
  const vocab = (
    'the a step divides multiplies adds subtracts wrong total ratio value later every off by factor two ' +
    'three percent of sum product equation solution answer should be instead carried unit price apples ' +
    'hours speed distance rate minus plus equals incorrectly computed sign error rounding assumes ' +
    'premise contradicts earlier result final because therefore which means so not is are was'
  ).split(' ');
  const sentence = (len: number) =>
    Array.from({ length: len }, () => (r() < 0.12 ? String(Math.floor(r() * 10_000) / 100) : vocab[Math.floor(r() * vocab.length)])).join(' ');
  return Array.from({ length: n }, (_, i) => {
    const rec = `gsm8k-${String(Math.floor(i / 2)).padStart(7, '0')}`;
    return {
      record_id: rec,
      defect_id: defectId(rec, i % 2),
      statement_refs: Array.from({ length: 1 + Math.floor(r() * 3) }, () => 1 + Math.floor(r() * 12)),
      impact: IMPACTS[Math.floor(r() * 4)]!,
      what_went_wrong: sentence(12 + Math.floor(r() * 20)),
      evidence: `"${sentence(15 + Math.floor(r() * 30))}"`,
      correct_value: r() < 0.4 ? null : String(Math.floor(r() * 100_000) / 100),
      vote_count: i % 4 === 0 ? null : 1 + (i % 3),
      voters: i % 4 === 0 ? [] : ['juror-a', 'juror-b', 'juror-c'].slice(0, 1 + (i % 3)),
      category_id: null,
      leaf_id: null,
      taxonomy_status: null,
    };
  });
}

/** Median of 3 runs: the 2-core machines are noisy. */
function time<T>(fn: () => T): [T, number] {
  const ms: number[] = [];
  let v!: T;
  for (let k = 0; k < 3; k++) {
    const t0 = performance.now();
    v = fn();
    ms.push(performance.now() - t0);
  }
  return [v, ms.sort((a, b) => a - b)[1]!];
}

describe.skipIf(!process.env.SHARD_BENCH)('Parquet write throughput (SHARD_BENCH=1)', () => {
  it.each([
    ['realistic', () => realisticDefects(N)],
    ['stress (unicode, 120 KB strings every ~1000 rows)', () => defectRows(N)],
  ])('100k DefectRows, %s', async (label, make) => {
    const rows = make();
    buildTable(DefectRow, rows.slice(0, 1000)); // warm up JIT and the wasm module
    toParquet(buildTable(DefectRow, rows.slice(0, 1000)));

    const [table, buildMs] = time(() => buildTable(DefectRow, rows));
    const [, buildNoValidateMs] = time(() => buildTable(DefectRow, rows, { validate: false }));
    const [zstd, zstdMs] = time(() => toParquet(table));
    const [none, noneMs] = time(() => toParquet(table, { compression: 'none' }));
    const [snappy, snappyMs] = time(() => toParquet(table, { compression: 'snappy' }));
    const rate = (ms: number) => Math.round(N / (ms / 1000)).toLocaleString('en-US');
    const mb = (b: number) => (b / 1e6).toFixed(2);
    console.log(
      [
        `[bench] ${label}: ${N.toLocaleString('en-US')} DefectRows`,
        `  validate+build Arrow ${buildMs.toFixed(0)} ms (${buildNoValidateMs.toFixed(0)} ms without zod validation)`,
        `  Parquet ZSTD   encode ${zstdMs.toFixed(0)} ms, ${mb(zstd.byteLength)} MB; end-to-end ${rate(buildMs + zstdMs)} rows/s`,
        `  Parquet snappy encode ${snappyMs.toFixed(0)} ms, ${mb(snappy.byteLength)} MB`,
        `  Parquet none   encode ${noneMs.toFixed(0)} ms, ${mb(none.byteLength)} MB (ZSTD is ${((zstd.byteLength / none.byteLength) * 100).toFixed(1)}% of it)`,
      ].join('\n'),
    );
    expect(zstd.byteLength).toBeLessThan(none.byteLength);
    expect((await readParquetRows(zstd, { columns: ['defect_id'] })).length).toBe(N);
  });
});
