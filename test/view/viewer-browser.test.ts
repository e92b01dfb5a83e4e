/**
 * `reasoning-jury view` in a real headless Chromium (Debian's `chromium`, driven by puppeteer-core):
 * an output judged by the simulator through the real CLI, served by the real `view` command.
 * Counts under filters are checked against the committed tables; a review made with the keyboard
 * lands in the `reviews` table and a following `decide` writes it; a trace carrying markup and
 * script runs nothing.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { claimOutput } from '../../src/compose/output-claim.js';
import { WHOLE_OUTPUT } from '../../src/pipeline/commit/lease-record.js';
import { LocalObjectStore } from '../../src/pipeline/storage/object-store.js';
import { readReviews } from '../../src/pipeline/commit/reviews.js';
import { readCommittedRows, type PlainRow } from '../../src/pipeline/commit/shard-read.js';
import { defaultProfile, startSimulator, type RunningSimulator } from '../../src/sim/index.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { BIN, runCli } from '../helpers/cli.js';
import { findChromium } from '../report/chromium.js';

const POLICY = {
  rules: [
    { name: 'fatal_defect', min_impact: 'fatal', decision: 'drop' },
    { name: 'some_dissent', has_dissent: true, decision: 'review' },
  ],
  default: 'keep',
};
const XSS_ID = 'xss-1';
const XSS_PROBLEM = 'What is 2+2? <img src=x onerror="window.__rjXss=1"> <script>window.__rjXss=2</script>';
const XSS_TRACE = 'Add the numbers: <img src=x onerror="window.__rjXss=3">.\n\nSo 2+2 = 4 <script>window.__rjXss=4</script>.\n\nThe answer is 4.';

/** Starts `view` and resolves with its URL once it says its index is ready. */
function startView(out: string): Promise<{ url: string; child: ChildProcess }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'view', out, '--port', '0', '--reviewer', 'tester'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    child.stdout!.on('data', (d) => {
      stdout += d;
      const url = /at (http:\/\/\S+)/.exec(stdout)?.[1];
      if (url && /ready/.test(stdout)) resolve({ url, child });
    });
    child.on('exit', (code) => reject(new Error(`view exited ${code}: ${stderr}`)));
  });
}

/** puppeteer wants a path: the `chromium` findChromium found, looked up on PATH. */
function chromiumPath(): string | null {
  const bin = findChromium();
  if (!bin || bin.includes('/')) return bin;
  const dir = (process.env.PATH ?? '').split(':').find((d) => d && existsSync(join(d, bin)));
  return dir ? join(dir, bin) : null;
}

// Locally a machine without Chromium skips this file; under CI=true it fails (.ci/run installs Debian chromium).
const CI = process.env.CI === 'true';
describe.skipIf(!findChromium() && !CI)('reasoning-jury view in Chromium', () => {
  let sim: RunningSimulator;
  let dir: string;
  let out: string;
  let view: { url: string; child: ChildProcess };
  let browser: Browser;
  let page: Page;
  let verdicts: PlainRow[];
  let decisions: PlainRow[];

  /** What the page says it drew last (`main[data-rendered]`: the hash it drew). */
  const RENDERED = "(document.getElementById('main')?.dataset.rendered ?? '')";
  const waitRendered = (hash: string) => page.waitForFunction(`${RENDERED} === ${JSON.stringify(hash)}`);
  /** Opens a view by its URL and waits until the page says it drew it. */
  async function open(hash: string): Promise<void> {
    await page.goto(`${view.url}${hash}`);
    await waitRendered(hash);
  }
  const shownCount = () => page.$eval('#count', (e) => Number(e.getAttribute('data-total')));
  const xssFlag = () => page.evaluate('window.__rjXss');

  beforeAll(async () => {
    if (!chromiumPath()) throw new Error('Chromium is required in CI (.ci/run installs Debian chromium; or set CHROMIUM_BIN)');
    sim = await startSimulator({ profile: defaultProfile() });
    dir = mkdtempSync(join(tmpdir(), 'rj-view-'));
    out = join(dir, 'out');
    const records = [...syntheticRecords(36, { seed: 21, cleanShare: 0.3 }), { id: XSS_ID, problem: XSS_PROBLEM, trace: XSS_TRACE }];
    writeFileSync(join(dir, 'in.jsonl'), records.map((r) => JSON.stringify(r)).join('\n') + '\n');
    writeFileSync(join(dir, 'jury.yaml'), YAML.stringify({
      endpoints: { sim: { kind: 'openai', base_url: sim.url, max_retries: 8, backoff_base_ms: 1, backoff_max_ms: 20 } },
      jurors: ['a', 'b', 'c'].map((x) => ({ id: `j-${x}`, endpoint: 'sim', model: `sim-juror-${x}` })),
      consolidator: { id: 'consolidator', endpoint: 'sim', model: 'sim-consolidator' },
      mode: 'consolidation',
      taxonomy: {},
      verdict_details: 'on',
      filter: POLICY,
    }));
    writeFileSync(join(dir, 'policy.yaml'), YAML.stringify(POLICY));
    const run = await runCli(['run', '-c', join(dir, 'jury.yaml'), '-i', join(dir, 'in.jsonl'), '-o', out, '--range-records', '10', '--progress', 'none']);
    if (run.code !== 0) throw new Error(`run failed: ${run.stderr}`);
    const store = new LocalObjectStore(out);
    verdicts = await readCommittedRows(store, 'verdicts');
    decisions = await readCommittedRows(store, 'decisions');
    view = await startView(out);
    browser = await puppeteer.launch({ executablePath: chromiumPath()!, headless: true, args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] });
    page = await browser.newPage();
  });

  afterAll(async () => {
    await browser?.close();
    view?.child.kill('SIGTERM');
    await sim?.close();
  });

  it('shows the committed counts under three filters, the last one picked in the page', async () => {
    const count = (pred: (v: PlainRow, d: PlainRow) => boolean) => verdicts.filter((v) => pred(v, decisions.find((d) => d.record_id === v.record_id)!)).length;
    await open('#/records');
    expect(await shownCount()).toBe(verdicts.length);
    await open('#/records?decision=drop');
    expect(await shownCount()).toBe(count((_v, d) => d.decision === 'drop'));
    expect(count((_v, d) => d.decision === 'drop')).toBeGreaterThan(0);
    await open('#/records?severity=fatal&decision=drop');
    expect(await shownCount()).toBe(count((v, d) => v.max_impact === 'fatal' && d.decision === 'drop'));
    await open('#/records');
    const keep = count((_v, d) => d.decision === 'keep');
    await page.select('select[name=decision]', 'keep');
    await waitRendered('#/records?decision=keep');
    expect(await shownCount()).toBe(keep);
    expect(await page.$$eval('table.records tbody tr', (rows) => rows.length)).toBe(Math.min(keep, 100));
    // Text search over problem and trace finds the one record whose trace says "onerror".
    await open('#/records?q=onerror');
    expect(await shownCount()).toBe(1);
  });

  it('the overview counts decisions, and a bar opens the records table filtered to it', async () => {
    await open('#/overview');
    const bars = await page.$$eval('a.barrow', (e) => e.map((a) => [a.getAttribute('href'), a.querySelector('.num')?.textContent]));
    for (const d of ['keep', 'drop', 'review']) {
      const n = decisions.filter((x) => x.decision === d).length;
      if (n > 0) expect(bars).toContainEqual([`#/records?decision=${d}`, String(n)]);
    }
    await page.click('a.barrow[href="#/records?decision=drop"]');
    await waitRendered('#/records?decision=drop');
    expect(await shownCount()).toBe(decisions.filter((x) => x.decision === 'drop').length);
  });

  it('shows a record\'s steps, defects and jurors', async () => {
    const v = verdicts.filter((x) => Number(x.n_defects) > 0).sort((a, b) => Number(b.n_defects) - Number(a.n_defects))[0]!;
    await open(`#/record/${encodeURIComponent(String(v.record_id))}?`);
    expect(await page.$eval('h1.recid', (e) => e.textContent)).toBe(v.record_id);
    expect(await page.$$eval('li.step', (e) => e.length)).toBe(v.n_steps);
    expect(await page.$$eval('article.defect', (e) => e.length)).toBe(v.n_defects);
    expect(await page.$$eval('article.juror', (e) => e.length)).toBe(v.jurors_total);
    // Steps a defect cites carry its severity; at least one evidence quote is marked in a step.
    const defects = (await readCommittedRows(new LocalObjectStore(out), 'defects')).filter((d) => d.record_id === v.record_id);
    const cited = (defects[0]!.statement_refs as number[])[0]!;
    expect(await page.$eval(`#step-${cited}`, (e) => e.className)).toMatch(/sev-(neutral|minor|major|fatal)/);
    // Each defect names the steps it cites, as links to them.
    const heads = await page.$$eval('article.defect .defect-head', (e) => e.map((x) => x.textContent));
    expect(heads).toEqual(defects.map((d) => expect.stringContaining(` at ${(d.statement_refs as number[]).map((n) => `STEP-${n}`).join(', ')}`)));
  });

  it('a review made with the keyboard lands in the reviews table, and decide writes it', async () => {
    const queue = decisions.filter((d) => d.decision === 'review');
    expect(queue.length).toBeGreaterThan(0);
    await page.goto(`${view.url}#/review`);
    // The queue opens its first record under its own filter (review records not reviewed yet).
    await page.waitForFunction(`(${RENDERED}).startsWith('#/record/') && (${RENDERED}).endsWith('?decision=review&reviewed=no')`);
    const first = await page.$eval('h1.recid', (e) => e.textContent);
    expect(queue.map((d) => d.record_id)).toContain(first);
    await page.type('#note', 'looks wrong to me <b>');
    await page.click('h1.recid'); // leave the note field: the keys act on the page
    await page.keyboard.press('d');
    // The page moves on once the review is committed.
    const here = `#/record/${encodeURIComponent(first!)}?`;
    await page.waitForFunction(`(${RENDERED}) !== '' && !(${RENDERED}).startsWith(${JSON.stringify(here)})`);
    const reviews = await readReviews(new LocalObjectStore(out));
    expect(reviews).toEqual([expect.objectContaining({ record_id: first, decision: 'drop', reviewer: 'tester', note: 'looks wrong to me <b>' })]);

    const decided = join(dir, 'decided');
    const d = await runCli(['decide', '--policy', join(dir, 'policy.yaml'), '--shards', out, '--out', decided]);
    expect(d.code, d.stderr).toBe(0);
    const rows = await readCommittedRows(new LocalObjectStore(decided), 'decisions');
    expect(rows.find((r) => r.record_id === first)).toMatchObject({ decision: 'drop', reason: 'review:tester' });
    // Every other record keeps the policy's decision.
    const others = rows.filter((r) => r.record_id !== first).map((r) => [r.record_id, r.decision, r.reason]);
    expect(others).toEqual(decisions.filter((r) => r.record_id !== first).map((r) => [r.record_id, r.decision, r.reason]));
  });

  it('a review while another command writes the output is not saved, and the page says why', async () => {
    const store = new LocalObjectStore(out);
    const before = (await readReviews(store)).length;
    const id = String(decisions.find((d) => d.decision === 'keep')!.record_id);
    await open(`#/record/${encodeURIComponent(id)}?`);
    const lease = await claimOutput({ store, location: out }, { command: 'run', scope: WHOLE_OUTPUT, settings: { expiryMs: 60_000, waitMs: 0, takeOver: false } });
    try {
      await page.click('#drop');
      await page.waitForFunction("(document.getElementById('review-status')?.textContent ?? '').startsWith('not saved')");
      expect(await page.$eval('#review-status', (e) => e.textContent)).toContain('is being written by run');
      expect(await page.$eval('h1.recid', (e) => e.textContent)).toBe(id); // it stays on the record
    } finally {
      await lease.release();
    }
    expect(await readReviews(store)).toHaveLength(before);
  });

  it('a trace holding <img onerror> and <script> shows as text and runs nothing', async () => {
    await open(`#/record/${XSS_ID}?`);
    expect(await xssFlag()).toBeUndefined();
    expect(await page.$$eval('main img, main script', (e) => e.length)).toBe(0);
    expect(await page.$eval('#problem', (e) => e.textContent)).toBe(XSS_PROBLEM);
    const steps = await page.$$eval('li.step .step-text', (e) => e.map((x) => x.textContent));
    expect(steps.join('\n')).toContain('<img src=x onerror="window.__rjXss=3">');
    expect(steps.join('\n')).toContain('<script>window.__rjXss=4</script>');
    // The records table and the raw record too.
    await open('#/records?q=onerror');
    expect(await page.$$eval('main img, main script', (e) => e.length)).toBe(0);
    expect(await xssFlag()).toBeUndefined();
  });
});
