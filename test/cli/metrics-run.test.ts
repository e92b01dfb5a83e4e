// `run --metrics-port` end to end: the built CLI on a file input with simulated jurors that take
// some milliseconds per call, scraped while it runs. Counters only move forward and do move; the
// final scrape (served after the summary thanks to --metrics-linger) says what the summary says;
// /readyz is 200 while running and 503 once shutting down or finished.
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { BIN, guardChild } from '../helpers/cli.js';
import { LONG_TEST_MS, treeProbe, waitForProgress } from '../helpers/progress.js';
import { conventionProblems, parseExposition, total, type Exposition } from '../helpers/prom-text.js';
import { fastSimConfig, tempDir, writeJsonl } from '../helpers/run-setup.js';

const PREFIX = 'reasoning_jury_';

interface Running {
  child: ChildProcess;
  out: string;
  stdout(): string;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  url(): Promise<string>;
}

function start(records: number, latencyMs: number, badLines: number): Running {
  const dir = tempDir('metrics');
  const input = writeJsonl(join(dir, 'in.jsonl'), syntheticRecords(records, { seed: 14 }));
  for (let i = 0; i < badLines; i++) appendFileSync(input, `{"id": "broken-${i}", \n`);
  const out = join(dir, 'out');
  // A few 429s and 500s, so error, retry and rate-limit counters have something to count.
  // Short backoffs: the default 500 ms base would make the retries, not the jury, set the pace.
  const sim = { kind: 'simulator', profile: join(dir, 'profile.yaml'), max_concurrency: 64, backoff_base_ms: 20, backoff_max_ms: 100 };
  // Every seat priced: a record with an unpriced call has cost_usd null and is left out of the
  // summary's cost, while the cost metric counts each priced call (test/cli/unpriced-cost.test.ts).
  const price = { input_per_mtok: 0.15, output_per_mtok: 0.62 };
  const prices = Object.fromEntries(['sim-juror-a', 'sim-juror-b', 'sim-juror-c', 'sim-consolidator'].map((m) => [m, price]));
  const config = fastSimConfig(dir, { endpoints: { sim }, prices }, { latency_ms: { median: latencyMs, sigma: 0.3, max: latencyMs * 3 }, rate_429: 0.03, rate_500: 0.02, retry_after_ms: 5 });
  const args = ['run', '--config', config, '--input', input, '--out', out, '--concurrency', '8', '--range-records', '40', '--progress', 'none'];
  const child = spawn(process.execPath, [BIN, ...args, '--metrics-port', '0', '--metrics-host', '127.0.0.1', '--metrics-linger', '600'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const guard = guardChild(child, { progress: treeProbe(out), what: 'run --metrics-port' });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => {
      guard.stop();
      resolve({ code, signal });
    }),
  );
  const url = async () => {
    let found: string | undefined;
    await waitForProgress(() => ((found = /metrics on (http:\/\/127\.0\.0\.1:\d+)\/metrics/.exec(stderr)?.[1]), { done: found !== undefined || child.exitCode !== null, progress: stderr.length }), { what: 'the metrics URL on stderr', pollMs: 20 });
    if (!found) throw new Error(`run exited before serving metrics: ${stderr}`);
    return found;
  };
  return { child, out, stdout: () => stdout, stderr: () => stderr, exited, url };
}

async function get(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.text() };
}

/** The summary's rows, label → value text. */
function summary(stdout: string): Map<string, string> {
  const rows = new Map<string, string>();
  for (const line of stdout.split('\n')) {
    const m = /^\s*(\S.*?)\s{2,}(\S.*)$/.exec(line);
    if (m) rows.set(m[1]!, m[2]!);
  }
  return rows;
}

const num = (rows: Map<string, string>, key: string): number => {
  const v = rows.get(key);
  if (v === undefined) throw new Error(`summary has no "${key}" row`);
  return Number(v);
};

/** Every counter sample (histogram parts included) of ours, by name and labels. */
function counterValues(e: Exposition): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of e.samples) {
    const family = s.name.replace(/_(bucket|sum|count)$/, '');
    const type = e.types.get(s.name) ?? e.types.get(family);
    if (!s.name.startsWith(PREFIX) || (type !== 'counter' && type !== 'histogram')) continue;
    out.set(`${s.name}${JSON.stringify(s.labels)}`, s.value);
  }
  return out;
}

/** Scrapes /metrics and /readyz until the summary is printed; returns what it saw. */
async function scrapeUntilSummary(r: Running, base: string, onScrape?: (e: Exposition) => Promise<void>) {
  const scrapes: Exposition[] = [];
  const ready: Array<{ status: number; body: string }> = [];
  await waitForProgress(
    async () => {
      if (!r.stdout().includes('shards:') && r.child.exitCode === null) {
        const m = await get(`${base}/metrics`);
        if (m.status === 200) {
          const e = parseExposition(m.body);
          scrapes.push(e);
          await onScrape?.(e);
        }
        ready.push(await get(`${base}/readyz`));
      }
      return { done: r.stdout().includes('shards:') || r.child.exitCode !== null, progress: r.stdout().length + r.stderr().length + scrapes.length };
    },
    { what: 'scrapes until the summary', pollMs: 100 },
  );
  return { scrapes, ready };
}

function expectMatchesSummary(e: Exposition, stdout: string): void {
  const s = summary(stdout);
  const [tokensIn, tokensOut] = s.get('tokens in / out')!.split(' / ').map(Number);
  expect(total(e, `${PREFIX}records_read_total`) + total(e, `${PREFIX}records_skipped_total`)).toBe(num(s, 'records in'));
  expect(total(e, `${PREFIX}records_skipped_total`)).toBe(num(s, 'already committed (skipped)'));
  expect(total(e, `${PREFIX}records_judged_total`)).toBe(num(s, 'judged'));
  expect(total(e, `${PREFIX}records_judged_total`, { outcome: 'clean' })).toBe(num(s, 'clean verdicts'));
  expect(total(e, `${PREFIX}records_judged_total`, { outcome: 'degraded' })).toBe(num(s, 'degraded verdicts'));
  expect(total(e, `${PREFIX}records_judged_total`, { outcome: 'no_verdict' })).toBe(num(s, 'no verdict (too few jurors)'));
  expect(total(e, `${PREFIX}records_dead_lettered_total`)).toBe(num(s, 'dead letters'));
  expect(total(e, `${PREFIX}ranges_committed_total`)).toBe(num(s, 'ranges committed'));
  expect(total(e, `${PREFIX}range_commit_duration_seconds_count`)).toBe(num(s, 'ranges committed'));
  expect(total(e, `${PREFIX}model_tokens_total`, { direction: 'in' })).toBe(tokensIn);
  expect(total(e, `${PREFIX}model_tokens_total`, { direction: 'out' })).toBe(tokensOut);
  expect(Math.abs(total(e, `${PREFIX}model_cost_usd_total`) - num(s, 'cost (USD)'))).toBeLessThan(6e-7);
  expect(total(e, `${PREFIX}records_in_flight`)).toBe(0);
}

describe('run --metrics-port', () => {
  it(
    'scraped during a run: counters only grow and do grow, /readyz is 200, and the last scrape matches the summary',
    async () => {
      const r = start(200, 25, 3);
      const base = await r.url();
      expect((await get(`${base}/healthz`)).status).toBe(200);
      const { scrapes, ready } = await scrapeUntilSummary(r, base);
      const final = parseExposition((await get(`${base}/metrics`)).body);
      const afterwards = await get(`${base}/readyz`);
      expect((await get(`${base}/healthz`)).status).toBe(200);
      r.child.kill('SIGTERM'); // ends the linger
      const exit = await r.exited;
      expect(exit.code, r.stderr()).toBe(0);

      // Monotonic: no counter ever goes down from one scrape to the next, the final one included.
      const series = [...scrapes, final].map(counterValues);
      for (let i = 1; i < series.length; i++) {
        for (const [key, v] of series[i - 1]!) expect(series[i]!.get(key) ?? 0, `${key} between scrapes ${i - 1} and ${i}`).toBeGreaterThanOrEqual(v);
      }
      // Moving: mid-run scrapes saw judging and committing in progress, not just before and after.
      const judged = scrapes.map((e) => total(e, `${PREFIX}records_judged_total`));
      const finalJudged = total(final, `${PREFIX}records_judged_total`);
      const between = new Set(judged.filter((j) => j > 0 && j < finalJudged));
      expect(between.size, `judged per scrape: ${judged.join(', ')}`).toBeGreaterThanOrEqual(2);
      expect(scrapes.some((e) => total(e, `${PREFIX}ranges_committed_total`) > 0 && total(e, `${PREFIX}ranges_committed_total`) < total(final, `${PREFIX}ranges_committed_total`))).toBe(true);

      expectMatchesSummary(final, r.stdout());
      expect(finalJudged).toBe(200);
      expect(total(final, `${PREFIX}records_dead_lettered_total`)).toBe(3);
      // The simulator's 429s and 500s were seen, and retried.
      expect(total(final, `${PREFIX}model_rate_limited_total`)).toBeGreaterThan(0);
      expect(total(final, `${PREFIX}model_request_errors_total`, { kind: 'server_error' })).toBeGreaterThan(0);
      expect(total(final, `${PREFIX}model_retries_total`)).toBeGreaterThan(0);
      // Requests include the run's preflight, one per distinct (endpoint, model), which judges
      // no record and so is no call: three jurors and the consolidator.
      expect(total(final, `${PREFIX}model_requests_total`, { outcome: 'ok' })).toBe(total(final, `${PREFIX}model_calls_total`, { outcome: 'ok' }) + 4);
      expect(total(final, `${PREFIX}model_request_duration_seconds_count`)).toBe(total(final, `${PREFIX}model_requests_total`));
      expect(total(final, `${PREFIX}source_connected`)).toBe(1);
      expect(final.types.get('nodejs_heap_size_used_bytes')).toBe('gauge');
      expect(conventionProblems(final, PREFIX)).toEqual([]);

      expect(ready.some((x) => x.status === 200 && x.body === 'ready\n'), JSON.stringify(ready.slice(0, 5))).toBe(true);
      expect(afterwards).toEqual({ status: 503, body: 'finished: the run is over\n' });
    },
    LONG_TEST_MS,
  );

  it(
    'SIGTERM mid-run: /readyz turns 503 at once while in-flight records finish, and the numbers still match',
    async () => {
      const r = start(200, 40, 0);
      const base = await r.url();
      let signalled = false;
      let afterSignal: { status: number; body: string } | undefined;
      let drainingWhenSeen = false;
      await scrapeUntilSummary(r, base, async (e) => {
        if (signalled || total(e, `${PREFIX}records_judged_total`) < 16) return;
        signalled = true;
        r.child.kill('SIGTERM');
        // The signal lands when the child's main thread next runs: poll until readiness changes.
        await waitForProgress(async () => {
          afterSignal = await get(`${base}/readyz`);
          return { done: afterSignal.status !== 200, progress: r.stdout().length };
        }, { what: '/readyz after SIGTERM', pollMs: 10 });
        drainingWhenSeen = !r.stdout().includes('shards:');
      });
      expect(signalled, 'the run must still be going when it is stopped').toBe(true);
      const inLinger = await get(`${base}/readyz`);
      const final = parseExposition((await get(`${base}/metrics`)).body);
      r.child.kill('SIGTERM');
      const exit = await r.exited;
      expect(exit.code, r.stderr()).toBe(0);
      expect(r.stdout()).toContain('stopped early');
      expect(afterSignal).toEqual({ status: 503, body: 'shutting down: finishing and committing the records in flight\n' });
      expect(drainingWhenSeen, 'seen before the summary, while in-flight records were still finishing').toBe(true);
      expect(inLinger.status).toBe(503);
      expectMatchesSummary(final, r.stdout());
      expect(total(final, `${PREFIX}records_judged_total`)).toBeLessThan(200);
    },
    LONG_TEST_MS,
  );
});
