import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openFileSource } from '../../connectors/file/index.js';
import type { Source } from '../../src/pipeline/source.js';
import { defaultConfigInput, parseConfig } from '../../src/config/load.js';
import { LocalObjectStore } from '../../src/pipeline/storage/object-store.js';
import { ShardCommitter } from '../../src/pipeline/commit/shard-commit.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { runStage } from '../../src/pipeline/stage.js';
import { intakeSettings, judgingSteps } from '../../src/pipeline/steps/index.js';
import { openRuntime } from '../../src/compose/runtime.js';
import { createSimProvider, defaultProfile, withoutFaults } from '../../src/sim/index.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { tempDir } from '../helpers/run-setup.js';

/** A source slower than the jury (a trickling topic): each record is done before the next arrives. */
function trickle(source: Source, ms: number): Source {
  return {
    name: source.name,
    close: () => source.close(),
    async *[Symbol.asyncIterator]() {
      for await (const item of source) {
        await new Promise((r) => setTimeout(r, ms));
        yield item;
      }
    },
  };
}

/** The stage with instant in-process jurors. */
async function runInstant(n: number, maxRecords: number, concurrency: number, trickleMs = 0) {
  const dir = tempDir('stage');
  const input = join(dir, 'in.jsonl');
  const records = syntheticRecords(n, { seed: 3 });
  writeFileSync(input, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const config = parseConfig({ ...defaultConfigInput(), cache: { enabled: false, dir: join(dir, 'c') } });
  const sim = createSimProvider({ profile: withoutFaults(defaultProfile()), latency: 'instant' });
  const runtime = await openRuntime({ config, auditLogPath: null, providerFor: () => sim });
  const file = await openFileSource(input);
  const source = trickleMs > 0 ? trickle(file, trickleMs) : file;
  const store = new LocalObjectStore(join(dir, 'out'));
  try {
    const counters = await runStage({ source, intake: intakeSettings(config), steps: judgingSteps({ config, jury: runtime.jury }), committer: new ShardCommitter(store), concurrency, range: { maxRecords, maxChars: 1 << 30, sequentialUnits: true } });
    return { counters, records, verdicts: await readCommittedRows(store, 'verdicts') };
  } finally {
    await source.close();
    await runtime.close();
  }
}

describe('stage', () => {
  // Regression: a range closed by its last record, after the earlier ones had finished, was
  // committed before that record was counted in it, so the record was silently lost.
  it.each([
    [60, 25, 1, 0],
    [60, 25, 4, 5],
    [101, 10, 16, 0],
    [40, 10, 4, 5],
    [7, 1, 3, 5],
  ])('%i records, ranges of %i, concurrency %i, %i ms between records: every record is committed exactly once', async (n, maxRecords, concurrency, trickleMs) => {
    const { counters, records, verdicts } = await runInstant(n, maxRecords, concurrency, trickleMs);
    const ids = verdicts.map((v) => String(v.record_id));
    expect(ids.length).toBe(n);
    expect(new Set(ids)).toEqual(new Set(records.map((r) => r.id)));
    expect(counters.records_committed).toBe(n);
    expect(counters.ranges_committed).toBe(Math.ceil(n / maxRecords));
  });
});

describe('stage: the source is closed on every way out of the pull loop', () => {
  // A Parquet or JSON source holds a file handle while suspended at a record; Node 26 fails the
  // process when one is left to the garbage collector, so an error in the loop must still end
  // the source's iteration, as a for-await would.
  it('an intake hold that throws still ends the source iteration, and the error is the one reported', async () => {
    const dir = tempDir('stage-throw');
    const config = parseConfig({ ...defaultConfigInput(), cache: { enabled: false, dir: join(dir, 'c') } });
    const sim = createSimProvider({ profile: withoutFaults(defaultProfile()), latency: 'instant' });
    const runtime = await openRuntime({ config, auditLogPath: null, providerFor: () => sim });
    const records = syntheticRecords(5, { seed: 9 });
    let ended = false;
    const source: Source = {
      name: 'held',
      close: async () => undefined,
      async *[Symbol.asyncIterator]() {
        try {
          for (const [i, r] of records.entries()) yield { position: { source: 'held', unit: 'u', offset: i }, ok: true as const, raw: r };
        } finally {
          ended = true;
        }
      },
    };
    let asked = 0;
    const intakeHold = {
      stats: { outages: 0, outageMs: 0 },
      blocked: () => {
        if (++asked === 3) throw new Error('hold broke');
        return null;
      },
    };
    try {
      const run = runStage({ source, intake: intakeSettings(config), steps: judgingSteps({ config, jury: runtime.jury }), committer: new ShardCommitter(new LocalObjectStore(join(dir, 'out'))), concurrency: 2, range: { maxRecords: 10, maxChars: 1 << 30, sequentialUnits: true }, intakeHold });
      await expect(run).rejects.toThrow('hold broke');
      expect(ended).toBe(true);
    } finally {
      await runtime.close();
    }
  });
});
