/**
 * The stage during an endpoint outage, in process: instant simulated jurors behind a provider
 * that refuses connections while `down` is set. An outage pauses intake and leaves no failed
 * verdict; one longer than the limit stops the stage with EndpointOutageError, commits only
 * ranges whose records were all judged, and a re-run judges the rest exactly once.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openFileSource } from '../../connectors/file/index.js';
import { openRuntime } from '../../src/compose/runtime.js';
import { readOutputState } from '../../src/compose/resume.js';
import { defaultConfigInput, parseConfig } from '../../src/config/load.js';
import { EndpointOutageError } from '../../src/llm/outage.js';
import { ProviderError, type Provider } from '../../src/llm/types.js';
import { endpointGate } from '../../src/pipeline/intake-gate.js';
import { LocalObjectStore } from '../../src/pipeline/storage/object-store.js';
import { ShardCommitter } from '../../src/pipeline/commit/shard-commit.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { runStage, type StageCounters } from '../../src/pipeline/stage.js';
import { intakeSettings, judgingSteps } from '../../src/pipeline/steps/index.js';
import { createSimProvider, defaultProfile, withoutFaults } from '../../src/sim/index.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { tempDir } from '../helpers/run-setup.js';
import { lineLogger } from '../../src/util/log.js';

const N = 60;
const RANGE = 10;

/** Instant jurors that refuse connections while `switch.down`; goes down after `downAfter` calls. */
function switchable(sw: { down: boolean; calls: number; downAfter: number; onDown?: () => void }): Provider {
  const sim = createSimProvider({ profile: withoutFaults(defaultProfile()), latency: 'instant' });
  return {
    name: 'switchable',
    async complete(req, signal) {
      sw.calls++;
      if (sw.calls === sw.downAfter) {
        sw.down = true;
        sw.onDown?.();
      }
      if (sw.down) throw new ProviderError('connection error: connect ECONNREFUSED 127.0.0.1:1', true, undefined, undefined, 'connection');
      return sim.complete(req, signal);
    },
  };
}

function setup() {
  const dir = tempDir('stage-outage');
  const input = join(dir, 'in.jsonl');
  const records = syntheticRecords(N, { seed: 5 });
  writeFileSync(input, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const base = defaultConfigInput();
  const configFor = (maxOutageMs: number) =>
    parseConfig({
      ...base,
      endpoints: { sim: { kind: 'simulator', max_retries: 1, backoff_base_ms: 5, backoff_max_ms: 20, breaker: { failures: 3, probe_interval_ms: 20, probe_max_interval_ms: 50 } } },
      cache: { enabled: false, dir: join(dir, 'c') },
      max_outage_ms: maxOutageMs,
    });
  const store = new LocalObjectStore(join(dir, 'out'));
  const settings = { max_records: RANGE, max_chars: 1 << 30, formats: ['parquet' as const] };
  async function run(provider: Provider, maxOutageMs: number, log: string[] = [], signal?: AbortSignal): Promise<{ counters?: StageCounters; error?: unknown }> {
    const config = configFor(maxOutageMs);
    const runtime = await openRuntime({ config, auditLogPath: null, providerFor: () => provider });
    const source = await openFileSource(input);
    const committed = (await readOutputState(store, settings, 'out')).ranges;
    const counters: { last?: StageCounters } = {};
    try {
      const c = await runStage({
        source,
        intake: intakeSettings(config),
        steps: judgingSteps({ config, jury: runtime.jury }),
        committer: new ShardCommitter(store),
        committed,
        concurrency: 4,
        range: { maxRecords: RANGE, maxChars: 1 << 30, sequentialUnits: true },
        gate: endpointGate(runtime.health, () => runtime.gateway.stopWaiting()),
        ...(signal ? { signal } : {}),
        onProgress: (p) => (counters.last = p),
        log: lineLogger((l) => log.push(l)),
      });
      return { counters: c };
    } catch (error) {
      return { error, ...(counters.last ? { counters: counters.last } : {}) };
    } finally {
      await source.close();
      await runtime.close();
    }
  }
  return { records, store, run };
}

async function verdicts(store: LocalObjectStore) {
  return (await readCommittedRows(store, 'verdicts')).map((v) => ({ id: String(v.record_id), error: v.error, degraded: v.degraded }));
}

describe('stage: endpoint outage', () => {
  it('an outage mid-run pauses intake; every record is judged once, none with an error or degraded', async () => {
    const { records, store, run } = setup();
    const sw = { down: false, calls: 0, downAfter: 80, onDown: () => setTimeout(() => (sw.down = false), 400) };
    const log: string[] = [];
    const { counters, error } = await run(switchable(sw), 60_000, log);
    expect(error).toBeUndefined();
    const v = await verdicts(store);
    expect(v.map((x) => x.id).sort()).toEqual(records.map((r) => r.id).sort());
    expect(v.filter((x) => x.error !== null || x.degraded)).toEqual([]);
    expect(counters!.pauses).toBeGreaterThanOrEqual(1);
    expect(counters!.paused_ms).toBeGreaterThan(0);
    expect(counters!.paused).toBe(false);
    expect(log.some((l) => /intake paused: endpoint "sim" is down/.test(l))).toBe(true);
    expect(log.some((l) => /intake resumed after/.test(l))).toBe(true);
  });

  it('an outage beyond the limit stops the stage: only fully judged ranges are committed, and a re-run judges the rest once', async () => {
    const { records, store, run } = setup();
    const first = await run(switchable({ down: false, calls: 0, downAfter: 100 }), 300);
    expect(first.error).toBeInstanceOf(EndpointOutageError);
    expect((first.error as Error).message).toMatch(/endpoint "sim" has been down \(unreachable or failing every call\)/);
    const partial = await verdicts(store);
    expect(partial.length).toBeGreaterThan(0);
    expect(partial.length).toBeLessThan(N);
    expect(partial.length % RANGE).toBe(0); // whole ranges only
    expect(partial.filter((x) => x.error !== null || x.degraded)).toEqual([]);
    expect(first.counters!.pauses).toBe(1);

    const second = await run(switchable({ down: false, calls: 0, downAfter: -1 }), 60_000);
    expect(second.error).toBeUndefined();
    expect(second.counters!.skipped_committed).toBe(partial.length);
    const all = await verdicts(store);
    expect(all.map((x) => x.id).sort()).toEqual(records.map((r) => r.id).sort());
    expect(all.filter((x) => x.error !== null || x.degraded)).toEqual([]);
  });

  it('a stop during an outage ends the run at once, committing none of the records that wait', async () => {
    const { store, run } = setup();
    const stop = new AbortController();
    const t0 = Date.now();
    const first = await run(switchable({ down: false, calls: 0, downAfter: 100, onDown: () => setTimeout(() => stop.abort(), 100) }), 600_000, [], stop.signal);
    expect(first.error).toBeInstanceOf(EndpointOutageError);
    expect((first.error as Error).message).toMatch(/^stopped while endpoint "sim" was down/);
    expect(Date.now() - t0).toBeLessThan(60_000); // not the 10 min maximum outage
    const partial = await verdicts(store);
    expect(partial.length % RANGE).toBe(0);
    expect(partial.length).toBeLessThan(N);
    expect(partial.filter((x) => x.error !== null || x.degraded)).toEqual([]);
  });
});
