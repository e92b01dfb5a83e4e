// The unit controls a streaming source relies on (src/pipeline/stage.ts): dropping a revoked
// unit's ranges, closing an idle unit's range, never stalling on interleaved open ranges, and
// never committing a range before the record that closed it is in it.
import { describe, expect, it } from 'vitest';
import type { Source, SourceItem, StreamingSource, UnitControl } from '../../src/pipeline/source.js';
import { defaultConfig } from '../../src/config/load.js';
import { MemoryObjectStore } from '../../src/pipeline/storage/object-store.js';
import { positionString } from '../../src/pipeline/positions.js';
import { ShardCommitter } from '../../src/pipeline/commit/shard-commit.js';
import { manifestKey } from '../../src/pipeline/commit/layout.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { runStage, type StageOptions } from '../../src/pipeline/stage.js';
import { intakeSettings, judgingSteps } from '../../src/pipeline/steps/index.js';

const bad = (unit: string, offset: number): SourceItem => ({ position: { source: 'kafka', unit, offset }, ok: false, error: 'bad', rawText: `x${offset}`, rawTextTruncated: false });

/** A streaming source driven by a script that may call the stage's unit controls between items. */
function scripted(script: (ctl: () => UnitControl) => AsyncGenerator<SourceItem>): { source: Source } {
  let ctl: UnitControl | undefined;
  const streaming: StreamingSource = { attach: (c) => (ctl = c), clearance: async () => ({ write: true }), rangeDone: () => {}, safeOffsets: () => [], acknowledge: async () => {} };
  const source = { name: 'scripted', streaming, [Symbol.asyncIterator]: () => script(() => ctl!), close: async () => {} } as Source;
  return { source };
}

const config = defaultConfig();
// Every item here is a dead letter at intake, so the jury is never asked.
const stageOf = (source: Source) => ({ source, intake: intakeSettings(config), steps: judgingSteps({ config, jury: {} as never }) });

async function run(source: Source, range: StageOptions['range'], window?: number) {
  const store = new MemoryObjectStore();
  const counters = await runStage({ ...stageOf(source), committer: new ShardCommitter(store), concurrency: 2, range, ...(window ? { window } : {}) });
  const dead = await readCommittedRows(store, 'dead_letters');
  const offsets = (unit: string) => dead.filter((d) => d.source_unit === unit).map((d) => Number(d.source_offset)).sort((a, b) => a - b);
  return { counters, offsets, dead };
}

const upTo = (n: number, from = 0) => Array.from({ length: n - from }, (_, i) => from + i);

describe('stage controls for streaming sources', () => {
  it('a range closed by its last record is committed with that record in it', async () => {
    const { source } = scripted(async function* () {
      for (const o of upTo(10)) yield bad('t+0', o);
    });
    const { counters, offsets } = await run(source, { maxRecords: 2, maxChars: 1e9, sequentialUnits: true });
    expect(offsets('t+0')).toEqual(upTo(10));
    expect(counters.records_committed).toBe(10);
  });

  it('dropUnit forgets the unit\'s open range; other units and committed ranges are untouched', async () => {
    const { source } = scripted(async function* (ctl) {
      for (const o of upTo(15)) yield bad('t+0', o); // [0..9] closes full; 10..14 stay open
      for (const o of upTo(5)) yield bad('t+1', o);
      await new Promise((r) => setTimeout(r, 20)); // let [0..9] commit first
      expect(ctl().dropUnit('t+0')).toBe(5);
      for (const o of upTo(10, 5)) yield bad('t+1', o);
    });
    const { counters, offsets } = await run(source, { maxRecords: 10, maxChars: 1e9, sequentialUnits: false });
    expect(offsets('t+0')).toEqual(upTo(10));
    expect(offsets('t+1')).toEqual(upTo(10));
    expect(counters.dropped_revoked).toBe(5);
  });

  it('a record pulled before its unit was dropped does not start a new range', async () => {
    const { source } = scripted(async function* (ctl) {
      for (const o of upTo(3)) yield bad('t+0', o); // closes [0..2], whose commit is slow
      // The stage holds offset 3 while it waits for a window slot; the drop lands meanwhile.
      setTimeout(() => ctl().dropUnit('t+0'), 10);
      yield bad('t+0', 3);
      yield bad('t+1', 0);
    });
    class SlowCommitter extends ShardCommitter {
      // Every argument passes through: the second carries the range's state hooks (staged, manifest written).
      override async commit(...args: Parameters<ShardCommitter['commit']>) {
        await new Promise((r) => setTimeout(r, 60));
        return super.commit(...args);
      }
    }
    const store = new MemoryObjectStore();
    const counters = await runStage({ ...stageOf(source), committer: new SlowCommitter(store), concurrency: 2, range: { maxRecords: 3, maxChars: 1e9, sequentialUnits: false }, window: 3 });
    const dead = await readCommittedRows(store, 'dead_letters');
    const offsets = (unit: string) => dead.filter((d) => d.source_unit === unit).map((d) => Number(d.source_offset));
    expect(offsets('t+0')).toEqual([0, 1, 2]); // already being written when the drop came: finishes
    expect(offsets('t+1')).toEqual([0]);
    expect(counters.dropped_revoked).toBe(1); // offset 3
    expect(await store.list('_commits/')).toHaveLength(2);
  });

  it('closeUnit commits an idle unit\'s partial range; later records start a new one', async () => {
    const { source } = scripted(async function* (ctl) {
      for (const o of upTo(5)) yield bad('t+0', o);
      ctl().closeUnit('t+0');
      for (const o of upTo(8, 5)) yield bad('t+0', o);
    });
    const store = new MemoryObjectStore();
    await runStage({ ...stageOf(source), committer: new ShardCommitter(store), concurrency: 2, range: { maxRecords: 100, maxChars: 1e9, sequentialUnits: false } });
    const name = (a: number, b: number) => manifestKey(positionString('t+0', a, 'kafka'), positionString('t+0', b, 'kafka'));
    expect(await store.list('_commits/')).toEqual([name(0, 4), name(5, 7)]);
  });

  it('interleaved units never stall the window: the largest open range is closed early', async () => {
    const { source } = scripted(async function* () {
      for (const o of upTo(40)) for (const p of [0, 1, 2, 3]) yield bad(`t+${p}`, o);
    });
    // 4 open ranges of up to 100 records cannot fit a window of 30 without early closes.
    const { offsets } = await run(source, { maxRecords: 100, maxChars: 1e9, sequentialUnits: false }, 30);
    for (const p of [0, 1, 2, 3]) expect(offsets(`t+${p}`)).toEqual(upTo(40));
  }, 20_000);
});
