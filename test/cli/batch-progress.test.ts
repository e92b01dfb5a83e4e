/**
 * `run --batch --metrics-port --progress log` against the simulator run as its own process: a
 * scrape taken while a batch is in progress sees it live with requests waiting; the final scrape
 * (kept up by --metrics-linger) and the last progress line say what the summary says; and a
 * progress line written mid-run shows a live batch.
 *
 * Each batch stays `in_progress` for BATCH_DELAY_MS in the simulator: long beside the scrape
 * interval, and more than twice the 5 s between progress lines, so a line written while records
 * wait (the first level's batch, then the consolidator's) catches one live even when the machine
 * is busy enough to delay a line by several seconds.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { benchRecords } from '../../bench/common.js';
import { batchConfig, startSim } from '../helpers/batch-run.js';
import { BIN, guardChild } from '../helpers/cli.js';
import { LONG_TEST_MS, treeProbe, waitForProgress } from '../helpers/progress.js';
import { parseExposition, total, type Exposition } from '../helpers/prom-text.js';
import { tempDir, writeJsonl } from '../helpers/run-setup.js';

const BATCH_DELAY_MS = 12_000;
const P = 'reasoning_jury_';
const dir = tempDir('batch-progress');
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

interface Running {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
}

function startRun(args: string[], out: string): Running {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const guard = guardChild(child, { progress: treeProbe(out), what: 'run --batch --metrics-port' });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => (guard.stop(), resolve(code))));
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

async function scrape(base: string): Promise<Exposition> {
  return parseExposition(await (await fetch(`${base}/metrics`)).text());
}

/** Scrapes until one shows a live batch with requests waiting (or the run is over); returns it. */
async function scrapeLiveBatch(r: Running, base: string): Promise<Exposition | undefined> {
  let live: Exposition | undefined;
  let mark = '';
  await waitForProgress(
    async () => {
      const e = await scrape(base);
      if (total(e, `${P}batches_in_progress`) >= 1 && total(e, `${P}batch_requests_waiting`) > 0) live = e;
      mark = `${total(e, `${P}batches_submitted_total`)} ${total(e, `${P}batch_oldest_wait_seconds`)}`;
      return { done: live !== undefined || r.child.exitCode !== null || r.stdout().includes('shards:'), progress: `${mark} ${r.stderr().length}` };
    },
    { what: 'a scrape showing a live batch', pollMs: 100 },
  );
  return live;
}

const summaryRow = (stdout: string, label: string): string => {
  const m = new RegExp(`^${label.replace(/[/()]/g, '\\$&')}\\s{2,}(.+)$`, 'm').exec(stdout);
  if (!m) throw new Error(`summary has no "${label}" row:\n${stdout}`);
  return m[1]!;
};

describe('run --batch: progress line and metrics', () => {
  it('a scrape mid-run sees a live batch and waiting requests; the end matches the summary; the progress line shows the batches', async () => {
    const input = writeJsonl(join(dir, 'in.jsonl'), benchRecords(30).records);
    const sim = await startSim(dir, children, 'progress', input, { completion_delay_ms: BATCH_DELAY_MS });
    const out = join(dir, 'out');
    const args = ['run', '-c', batchConfig(dir, 'progress', sim.url), '-i', input, '-o', out, '--batch', '--progress', 'log'];
    const r = startRun([...args, '--metrics-port', '0', '--metrics-host', '127.0.0.1', '--metrics-linger', '600'], out);
    let base: string | undefined;
    await waitForProgress(() => ((base = /metrics on (http:\/\/127\.0\.0\.1:\d+)\/metrics/.exec(r.stderr())?.[1]), { done: base !== undefined || r.child.exitCode !== null, progress: r.stderr().length }), { what: 'the metrics URL', pollMs: 20 });
    expect(base, r.stderr()).toBeDefined();

    const live = await scrapeLiveBatch(r, base!);
    expect(live, `no scrape saw a live batch; stderr:\n${r.stderr()}`).toBeDefined();
    expect(total(live!, `${P}batches_submitted_total`)).toBeGreaterThanOrEqual(1);
    expect(total(live!, `${P}batch_oldest_wait_seconds`)).toBeGreaterThan(0);

    await waitForProgress(() => ({ done: r.stdout().includes('shards:') || r.child.exitCode !== null, progress: `${r.stdout().length} ${r.stderr().length}` }), { what: 'the summary' });
    const final = await scrape(base!);
    r.child.kill('SIGTERM'); // ends the linger
    expect(await r.exited, r.stderr()).toBe(0);

    const [submitted, completed, failed] = summaryRow(r.stdout(), 'batches submitted / completed / failed or expired').split(' / ').map(Number);
    expect(submitted).toBeGreaterThanOrEqual(2); // Phase 1, then consolidation
    expect(total(final, `${P}batches_submitted_total`)).toBe(submitted);
    expect(total(final, `${P}batches_finished_total`, { outcome: 'completed' })).toBe(completed);
    expect(total(final, `${P}batches_finished_total`, { outcome: 'failed' })).toBe(failed);
    expect(total(final, `${P}batches_in_progress`)).toBe(0);
    expect(total(final, `${P}batch_requests_waiting`)).toBe(0);
    expect(total(final, `${P}batch_requests_submitted_total`)).toBe(Number(summaryRow(r.stdout(), '  requests sent in batches')));

    const lines = r.stderr().split('\n').filter((l) => l.startsWith('[run] '));
    expect(lines.at(-1)).toContain(`, batches ${submitted} sent / 0 live / ${completed} done, 0 requests waiting`);
    const midRun = lines.slice(0, -1).filter((l) => /batches \d+ sent \/ [1-9]\d* live \/ \d+ done, [1-9][\d,]* requests waiting \(oldest \d/.test(l));
    expect(midRun.length, lines.join('\n')).toBeGreaterThanOrEqual(1);
  }, LONG_TEST_MS);
});
