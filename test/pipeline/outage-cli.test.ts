/**
 * Endpoint outages as an operator meets them: `reasoning-jury run` on a file against a juror
 * simulator running as its own process, which is SIGKILLed mid-run.
 *
 * - back after 15 s: intake pauses, every record is judged exactly once, none with an error or
 *   degraded, and the summary reports the pause;
 * - never back, with --max-outage 3s: exit code 3 with one line naming the endpoint, only
 *   fully judged ranges committed, and the same command, once the server is back, judges the rest.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import YAML from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalObjectStore } from '../../src/pipeline/storage/object-store.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { runCli } from '../helpers/cli.js';
import { LONG_TEST_MS, treeProbe, waitForProgress } from '../helpers/progress.js';
import { tempDir, writeJsonl } from '../helpers/run-setup.js';
import { simProfile, startSimProcess, type SimProcess } from '../helpers/sim-process.js';

const sims: SimProcess[] = [];

/** A port nothing listens on now (the run's metrics server takes it). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}
afterEach(async () => {
  for (const s of sims.splice(0)) await s.kill();
});

function manifests(out: string): number {
  try {
    return readdirSync(join(out, '_commits')).filter((n) => n.endsWith('.json')).length;
  } catch {
    return 0;
  }
}

/** 3 jurors + consolidation on one OpenAI-compatible endpoint: the separately run simulator. */
function config(dir: string, url: string): string {
  const path = join(dir, 'jury.yaml');
  writeFileSync(
    path,
    YAML.stringify({
      endpoints: { sim: { base_url: url, max_concurrency: 16, max_retries: 2, backoff_base_ms: 50, backoff_max_ms: 200, breaker: { failures: 3, probe_interval_ms: 200, probe_max_interval_ms: 1000 } } },
      jurors: ['a', 'b', 'c'].map((x, i) => ({ id: `jury-${i}`, endpoint: 'sim', model: `sim-juror-${x}` })),
      consolidator: { id: 'consolidator', endpoint: 'sim', model: 'sim-consolidator' },
      cache: { enabled: false, dir: join(dir, 'cache') },
    }),
  );
  return path;
}

async function setup(n: number) {
  const dir = tempDir('outage-cli');
  const sim = await startSimProcess(simProfile(dir, { median: 8, sigma: 0.3, max: 40 }));
  sims.push(sim);
  const records = syntheticRecords(n, { seed: 14 });
  const input = writeJsonl(join(dir, 'in.jsonl'), records);
  const out = join(dir, 'out');
  const args = ['run', '--config', config(dir, sim.url), '--input', input, '--out', out, '--range-records', '20', '--concurrency', '4', '--progress', 'log'];
  const verdicts = async () => (await readCommittedRows(new LocalObjectStore(out), 'verdicts')).map((v) => ({ id: String(v.record_id), error: v.error as string | null, degraded: Boolean(v.degraded) }));
  return { dir, sim, records, out, args, verdicts };
}

/** Resolves once `out` holds at least `n` committed ranges (waiting on progress, not time). */
const committed = (out: string, n: number) => waitForProgress(() => ({ done: manifests(out) >= n, progress: treeProbe(out)() }), { what: `${n} committed ranges` });

describe('run: endpoint outage (separately run simulator)', () => {
  it('simulator down 15 s mid-run: intake pauses, /readyz says so, every record judged once, none errored or degraded', async () => {
    const { sim, records, out, args, verdicts } = await setup(300);
    const port = await freePort();
    const readyz = () => fetch(`http://127.0.0.1:${port}/readyz`).then((res) => res.status, () => 0);
    const run = runCli([...args, '--metrics-port', String(port), '--metrics-host', '127.0.0.1'], { progress: treeProbe(out) });
    await committed(out, 2);
    expect(await readyz()).toBe(200);
    const before = manifests(out);
    await sim.kill();
    // Not ready while the only endpoint is down (the breaker trips on the refused connections).
    let status = 0;
    await waitForProgress(async () => ({ done: (status = await readyz()) === 503, progress: status }), { what: '/readyz to turn 503' });
    await new Promise((r) => setTimeout(r, 15_000));
    await sim.start();
    let back = 0;
    await waitForProgress(async () => ({ done: (back = await readyz()) === 200 || manifests(out) >= 15, progress: manifests(out) }), { what: '/readyz to turn 200 again' });
    const r = await run;
    expect(status).toBe(503);
    expect(back).toBe(200); // ready again once the probe found the endpoint back, before the run ended
    expect(r.code, r.stderr).toBe(0);
    expect(before).toBeLessThan(15); // killed mid-run: 300 records are 15 ranges
    const v = await verdicts();
    expect(v.map((x) => x.id).sort()).toEqual(records.map((x) => x.id).sort());
    expect(v.filter((x) => x.error !== null || x.degraded)).toEqual([]);
    expect(r.stderr).toMatch(/intake paused: endpoint "sim" is (down|probing)/);
    expect(r.stderr).toMatch(/intake resumed after/);
    const paused = /paused \(an endpoint was down\)\s+(\d+) time\(s\), ([\d.]+) s in all/.exec(r.stdout);
    expect(paused, r.stdout).not.toBeNull();
    expect(Number(paused![2])).toBeGreaterThanOrEqual(12);
    expect(r.stdout).toMatch(/no verdict \(too few jurors\)\s+0\n/);
    expect(r.stdout).toMatch(/degraded verdicts\s+0\n/);
    console.log(r.stdout);
  }, LONG_TEST_MS);

  it('simulator gone longer than --max-outage: exit 3, one line, nothing unjudged committed; the re-run judges the rest once', async () => {
    const { sim, records, out, args, verdicts } = await setup(120);
    const run = runCli([...args, '--max-outage', '3s'], { progress: treeProbe(out) });
    await committed(out, 1);
    await sim.kill();
    const r = await run;
    expect(r.code, r.stderr).toBe(3);
    const lines = r.stderr.split('\n').filter((l) => /has been down/.test(l) && !/intake paused/.test(l));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^reasoning-jury: endpoint "sim" has been down \(unreachable or failing every call\) for \d+ s, longer than the allowed outage of 3 s .*run the same command again/);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack
    const partial = await verdicts();
    expect(partial.length).toBeGreaterThan(0);
    expect(partial.length).toBeLessThan(records.length);
    expect(partial.length % 20).toBe(0); // whole ranges only
    expect(partial.filter((x) => x.error !== null || x.degraded)).toEqual([]);

    await sim.start();
    const again = await runCli(args, { progress: treeProbe(out) });
    expect(again.code, again.stderr).toBe(0);
    const all = await verdicts();
    expect(all.map((x) => x.id).sort()).toEqual(records.map((x) => x.id).sort());
    expect(all.filter((x) => x.error !== null || x.degraded)).toEqual([]);
  }, LONG_TEST_MS);
});
