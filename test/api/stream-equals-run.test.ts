/**
 * `juryStream` and `run` are one stage: over the same 2,000 ProcessBench records (cache off, the
 * deterministic simulator graded against the same labels), the stream's verdict rows equal the
 * rows `run` commits, column for column, except the ones that say where or how long: the
 * position (`source`, `source_unit`, `source_offset`: a stream has no file) and `latency_ms`
 * (measured wall time of the model calls).
 */
import { createReadStream, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pipeline } from 'node:stream/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { benchRecords } from '../../bench/common.js';
import { juryStream, type StreamResult } from '../../src/api/index.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { LocalObjectStore } from '../../src/pipeline/storage/object-store.js';
import { runCli } from '../helpers/cli.js';
import { LONG_TEST_MS, treeProbe } from '../helpers/progress.js';
import { fastSimConfig, tempDir, writeJsonl } from '../helpers/run-setup.js';

const N = 2000;
const NOT_COMPARED = ['latency_ms', 'source', 'source_unit', 'source_offset'];
const dir = tempDir('api-equal');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A row as plain JSON values (Parquet gives int64 as bigint), without the columns not compared. */
function comparable(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) if (!NOT_COMPARED.includes(k)) out[k] = typeof v === 'bigint' ? Number(v) : v;
  return JSON.parse(JSON.stringify(out)) as Record<string, unknown>;
}

async function* lines(path: string): AsyncGenerator<unknown> {
  for await (const line of createInterface({ input: createReadStream(path), crlfDelay: Infinity })) if (line.trim()) yield JSON.parse(line);
}

describe('juryStream against run', () => {
  it(`gives the verdict rows run commits, over ${N} ProcessBench records`, async () => {
    const { records, source } = benchRecords(N);
    expect(source).toMatch(/ProcessBench/);
    const input = writeJsonl(join(dir, 'processbench.jsonl'), records);
    const config = fastSimConfig(dir);
    const out = join(dir, 'out');
    const res = await runCli(['run', '-c', config, '-i', input, '-o', out, '--progress', 'none', '--concurrency', '16'], { progress: treeProbe(out) });
    expect(res.code, res.stderr).toBe(0);
    const byRun = new Map((await readCommittedRows(new LocalObjectStore(out), 'verdicts')).map((r) => [String(r.record_id), comparable(r)]));

    const byStream = new Map<string, Record<string, unknown>>();
    let dead = 0;
    await pipeline(lines(input), juryStream({ config, simulatorGold: input, concurrency: 16, ordered: false }), async (results: AsyncIterable<StreamResult>) => {
      for await (const r of results) {
        if (r.ok) byStream.set(r.rows.verdict.record_id, comparable(r.rows.verdict as unknown as Record<string, unknown>));
        else dead++;
      }
    });
    expect(dead).toBe(0);
    expect(byStream.size).toBe(N);
    expect(byRun.size).toBe(N);
    const differing = [...byRun].filter(([id, row]) => JSON.stringify(row) !== JSON.stringify(byStream.get(id)));
    expect(differing.slice(0, 3).map(([id, row]) => ({ id, run: row, stream: byStream.get(id) }))).toEqual([]);
  }, LONG_TEST_MS);
});
