// The stage over an output store that goes down: intake is held while it is down, the run
// completes once it is back, a store that never comes back stops the stage with the range
// named (even with a full window), and a manifest whose reply was lost counts as committed.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openFileSource } from '../../connectors/file/index.js';
import { defaultConfigInput, parseConfig } from '../../src/config/load.js';
import { openRuntime } from '../../src/compose/runtime.js';
import { COMMITS_PREFIX } from '../../src/pipeline/commit/layout.js';
import { LocalObjectStore, MemoryObjectStore, ObjectExistsError, type ObjectStore } from '../../src/pipeline/storage/object-store.js';
import { retryingStore } from '../../src/pipeline/storage/retrying-store.js';
import { listCommitted, ShardCommitter } from '../../src/pipeline/commit/shard-commit.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import type { Source } from '../../src/pipeline/source.js';
import { runStage } from '../../src/pipeline/stage.js';
import { intakeSettings, judgingSteps } from '../../src/pipeline/steps/index.js';
import { StorageError } from '../../src/pipeline/storage/storage-error.js';
import { StorageRetry } from '../../src/pipeline/storage/storage-retry.js';
import { createSimProvider, defaultProfile, withoutFaults } from '../../src/sim/index.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { waitForProgress } from '../helpers/progress.js';
import { tempDir } from '../helpers/run-setup.js';

const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });

/** A store that refuses every operation while `down` is set, like a stopped S3 server. */
class SwitchableStore implements ObjectStore {
  down = false;
  failures = 0;
  constructor(readonly inner: ObjectStore) {}
  private gate(): void {
    if (this.down) {
      this.failures += 1;
      throw refused();
    }
  }
  async putObject(key: string, bytes: Uint8Array) {
    this.gate();
    return this.inner.putObject(key, bytes);
  }
  async exists(key: string) {
    this.gate();
    return this.inner.exists(key);
  }
  async get(key: string) {
    this.gate();
    return this.inner.get(key);
  }
  async list(prefix: string) {
    this.gate();
    return this.inner.list(prefix);
  }
  locate(key: string) {
    return this.inner.locate(key);
  }
  isTransient(err: unknown) {
    return (err as { code?: string }).code === 'ECONNREFUSED';
  }
}

/** Counts the records the stage pulled; `gapMs` between them makes a trickling source. */
function counted(source: Source, gapMs = 0): { source: Source; pulled: () => number } {
  let n = 0;
  return {
    pulled: () => n,
    source: {
      name: source.name,
      close: () => source.close(),
      async *[Symbol.asyncIterator]() {
        for await (const item of source) {
          if (gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
          n += 1;
          yield item;
        }
      },
    },
  };
}

interface StageOver {
  during?: (pulled: () => number) => Promise<void>;
  signal?: AbortSignal;
  /** a window with room to spare, so only the hold can stop intake */
  window?: number;
  gapMs?: number;
}

async function stageOver(n: number, wrap: (local: LocalObjectStore) => ObjectStore, retry: StorageRetry, { during, signal, window, gapMs }: StageOver = {}) {
  const dir = tempDir('storage-outage');
  const input = join(dir, 'in.jsonl');
  const records = syntheticRecords(n, { seed: 5 });
  writeFileSync(input, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const config = parseConfig({ ...defaultConfigInput(), cache: { enabled: false, dir: join(dir, 'c') } });
  const sim = createSimProvider({ profile: withoutFaults(defaultProfile()), latency: 'instant' });
  const runtime = await openRuntime({ config, auditLogPath: null, providerFor: () => sim });
  const { source, pulled } = counted(await openFileSource(input), gapMs);
  const local = new LocalObjectStore(join(dir, 'out'));
  const store = retryingStore(wrap(local), retry, local.root);
  try {
    const run = runStage({ source, intake: intakeSettings(config), steps: judgingSteps({ config, jury: runtime.jury }), committer: new ShardCommitter(store), concurrency: 2, range: { maxRecords: 5, maxChars: 1 << 30, sequentialUnits: true }, intakeHold: retry, ...(signal ? { signal } : {}), ...(window ? { window } : {}) });
    const [result] = await Promise.allSettled([run, during?.(pulled)]);
    return { result, records, local, pulled };
  } finally {
    await source.close();
    await runtime.close();
  }
}

const quiet = { log: () => undefined, baseDelayMs: 5, maxDelayMs: 20 };

describe('stage over a store that goes down', () => {
  it('holds intake while the store is down and completes once it is back', async () => {
    let flaky: SwitchableStore | undefined;
    const retry = new StorageRetry({ maxOutageMs: 10 * 60_000, store: 'out', ...quiet });
    const during = async (pulledNow: () => number) => {
      await waitForProgress(() => ({ done: pulledNow() >= 10, progress: pulledNow() }));
      flaky!.down = true;
      await waitForProgress(() => ({ done: retry.blocked() !== null, progress: flaky!.failures }), { what: 'the outage to begin' });
      const atHold = pulledNow();
      // Many failed retries later, intake is still where it was held, with the window far from full.
      await waitForProgress(() => ({ done: flaky!.failures >= 20, progress: flaky!.failures }), { what: 'retries' });
      expect(pulledNow()).toBeLessThanOrEqual(atHold + 1);
      flaky!.down = false;
    };
    const { result, records, local, pulled } = await stageOver(60, (l) => (flaky = new SwitchableStore(l)), retry, { during, window: 100, gapMs: 5 });
    expect(result.status, String((result as PromiseRejectedResult).reason)).toBe('fulfilled');
    const counters = (result as PromiseFulfilledResult<Awaited<ReturnType<typeof runStage>>>).value;
    expect(counters.records_committed).toBe(60);
    expect(counters.storage_outages).toBeGreaterThanOrEqual(1);
    expect(counters.storage_outage_ms).toBeGreaterThan(0);
    expect(pulled()).toBe(60);
    const ids = (await readCommittedRows(local, 'verdicts')).map((v) => String(v.record_id));
    expect(ids.sort()).toEqual(records.map((r) => r.id).sort());
    expect(retry.stats.outages).toBeGreaterThanOrEqual(1);
  });

  it('a store that never comes back stops the stage with the range named, with a full window', async () => {
    let flaky: SwitchableStore | undefined;
    const retry = new StorageRetry({ maxOutageMs: 300, store: 'out', ...quiet });
    const { result, local, pulled } = await stageOver(200, (l) => {
      flaky = new SwitchableStore(l);
      // Down from the second range on: the first commits, then the window (2 * 5 + 2) fills up.
      const put = flaky.putObject.bind(flaky);
      let commits = 0;
      flaky.putObject = async (key, bytes) => {
        if (key.startsWith(COMMITS_PREFIX) && ++commits > 1) flaky!.down = true;
        return put(key, bytes);
      };
      return flaky;
    }, retry);
    expect(result.status).toBe('rejected');
    const err = (result as PromiseRejectedResult).reason as StorageError;
    expect(err).toBeInstanceOf(StorageError);
    expect(err.failure.why).toBe('gave-up');
    expect(err.range).toMatch(/^\S+\.\.\S+$/);
    expect(err.message).toContain(`(range ${err.range})`);
    expect(pulled()).toBeLessThan(40); // held, then stopped: not the 200 of the input
    flaky!.down = false;
    const committed = await listCommitted(local);
    expect(committed.length).toBe(1); // nothing else became visible
  });

  it('a stop asked for during an outage ends the wait at once instead of after the maximum', async () => {
    let flaky: SwitchableStore | undefined;
    const stop = new AbortController();
    const retry = new StorageRetry({ maxOutageMs: 10 * 60_000, store: 'out', signal: stop.signal, ...quiet });
    const t0 = Date.now();
    const { result } = await stageOver(
      200,
      (l) => (flaky = new SwitchableStore(l)),
      retry,
      {
        during: async (pulledNow) => {
          await waitForProgress(() => ({ done: pulledNow() >= 10, progress: pulledNow() }));
          flaky!.down = true;
          await waitForProgress(() => ({ done: retry.blocked() !== null, progress: flaky!.failures }), { what: 'the outage to begin' });
          stop.abort();
        },
        signal: stop.signal,
      },
    );
    expect(result.status).toBe('rejected');
    expect((result as PromiseRejectedResult).reason).toMatchObject({ failure: { why: 'stopped' } });
    expect(Date.now() - t0).toBeLessThan(60_000); // not the 10 minutes
  });

  it('a manifest written whose reply was lost counts as committed on the retry, not as a conflict', async () => {
    // Create-only manifests (S3 If-None-Match: *) over memory; the first manifest reply is lost.
    const mem = new MemoryObjectStore();
    let lost = 0;
    const lossy: ObjectStore = {
      ...mem,
      locate: (k) => mem.locate(k),
      exists: (k) => mem.exists(k),
      get: (k) => mem.get(k),
      list: (p) => mem.list(p),
      isTransient: (e) => (e as { code?: string }).code === 'ECONNRESET',
      putObject: async (key, bytes) => {
        if (key.startsWith(COMMITS_PREFIX) && mem.objects.has(key)) throw new ObjectExistsError(key);
        await mem.putObject(key, bytes);
        if (key.startsWith(COMMITS_PREFIX) && lost++ === 0) throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
      },
    };
    const retry = new StorageRetry({ maxOutageMs: 60_000, store: 'memory', ...quiet });
    const { result, records } = await stageOver(12, () => lossy, retry);
    expect(result.status, String((result as PromiseRejectedResult).reason)).toBe('fulfilled');
    const counters = (result as PromiseFulfilledResult<Awaited<ReturnType<typeof runStage>>>).value;
    expect(lost).toBeGreaterThan(1);
    expect(counters.records_committed).toBe(12);
    expect(counters.ranges_not_written).toBe(0);
    const ids = (await readCommittedRows(mem, 'verdicts')).map((v) => String(v.record_id));
    expect(ids.sort()).toEqual(records.map((r) => r.id).sort());
  });
});
