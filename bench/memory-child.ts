import { readFileSync } from 'node:fs';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { openFileSource } from '../connectors/file/index.js';
import { defaultConfigInput, parseConfig } from '../src/config/load.js';
import { LocalObjectStore } from '../src/pipeline/storage/object-store.js';
import { ShardCommitter } from '../src/pipeline/commit/shard-commit.js';
import { runStage } from '../src/pipeline/stage.js';
import { intakeSettings, judgingSteps } from '../src/pipeline/steps/index.js';
import { openRuntime } from '../src/compose/runtime.js';
import { createSimProvider, defaultProfile, withoutFaults } from '../src/sim/index.js';

/**
 * One measured run in a fresh process (so peak RSS is this run's alone). As in `run`, the stage
 * executes in a worker thread with a 1024 MB heap limit (run --max-heap-mb's default).
 */
if (isMainThread) {
  const [input, out] = process.argv.slice(2) as [string, string];
  const worker = new Worker(new URL(import.meta.url), { workerData: { input, out }, resourceLimits: { maxOldGenerationSizeMb: 1024 } });
  const result = await new Promise<Record<string, unknown>>((resolve, reject) => {
    worker.on('message', resolve);
    worker.on('error', reject);
  });
  const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  process.stdout.write(JSON.stringify({ ...result, peak_rss_mb: hwm ? Number(hwm[1]) / 1024 : NaN }) + '\n');
} else {
  const { input, out } = workerData as { input: string; out: string };
  const config = parseConfig({ ...defaultConfigInput(), cache: { enabled: false, dir: '.cache/none' } });
  const sim = createSimProvider({ profile: withoutFaults(defaultProfile()), latency: 'instant' });
  const runtime = await openRuntime({ config, auditLogPath: null, providerFor: () => sim });
  const source = await openFileSource(input);
  const t0 = performance.now();
  const counters = await runStage({
    source,
    intake: intakeSettings(config),
    steps: judgingSteps({ config, jury: runtime.jury }),
    committer: new ShardCommitter(new LocalObjectStore(out)),
    concurrency: 16,
    range: { maxRecords: 1000, maxChars: 64 << 20, sequentialUnits: true },
  });
  const seconds = (performance.now() - t0) / 1000;
  await source.close();
  await runtime.close();
  parentPort!.postMessage({ records: counters.read, committed: counters.records_committed, seconds });
}
