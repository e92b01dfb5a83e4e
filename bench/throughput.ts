import PQueue from 'p-queue';
import { parseConfig } from '../src/config/load.js';
import { judgeRecord } from '../src/jury/judge.js';
import { prepareRecord } from '../src/pipeline/steps/segment.js';
import { openRuntime } from '../src/compose/runtime.js';
import { buildGoldIndex, parseProfile, startSimulator } from '../src/sim/index.js';
import { benchRecords, fmt } from './common.js';

/**
 * Calls/s the model layer sustains against the simulator when the endpoint allows 32 calls in
 * flight and every call takes 500 ms: the ceiling is 32 / 0.5 s = 64 calls/s.
 */
export async function benchThroughput(nRecords = 400): Promise<string> {
  const { records } = benchRecords(nRecords);
  const profile = parseProfile({ seed: 1, models: { default: { latency_ms: { median: 500, sigma: 0 }, max_concurrency: 32 } } });
  const sim = await startSimulator({ profile, gold: buildGoldIndex(records) });
  const seat = (id: string) => ({ id, endpoint: 'sim', model: 'sim-any' });
  const config = parseConfig({
    endpoints: { sim: { base_url: sim.url, max_concurrency: 32, timeout_ms: 30_000 } },
    jurors: [seat('jury-0'), seat('jury-1'), seat('jury-2')],
    consolidator: seat('consolidator'),
    mode: 'consolidation',
    cache: { enabled: false, dir: '.cache/none' },
  });
  const rt = await openRuntime({ config, auditLogPath: null });
  // Enough records in flight that the 32 endpoint slots never run dry while consolidations wait.
  const queue = new PQueue({ concurrency: 48 });
  const t0 = performance.now();
  await Promise.all(
    records.map((r) =>
      queue.add(async () => {
        const p = prepareRecord(r, config);
        if (p.ok) await judgeRecord(rt.jury, p.input);
      }),
    ),
  );
  const secs = (performance.now() - t0) / 1000;
  const calls = rt.gateway.ledger.summary().total.attempts;
  const stats = sim.stats();
  await rt.close();
  await sim.close();
  const rate = calls / secs;
  const rejected = Object.values(stats.requests).reduce((a, r) => a + ((r as Record<string, number>).rate_limited ?? 0), 0);
  return [
    `Throughput against the simulator, 32-call cap, 500 ms per call (limit 64 calls/s), ${nRecords} records x 4 calls:`,
    '',
    '| calls | seconds | calls/s | ratio to 64 | 429s from the cap | max in flight | target |',
    '|---|---|---|---|---|---|---|',
    `| ${calls} | ${fmt(secs, 1)} | ${fmt(rate, 1)} | **${fmt(rate / 64, 3)}** | ${rejected} | ${Math.max(...Object.values(stats.max_in_flight))} | ≥ 0.95 |`,
  ].join('\n');
}
