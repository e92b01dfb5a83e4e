import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { SEVERITY_COLORS } from '../../src/report/html.js';
import { createRng } from '../../src/util/prng.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { loadTaxonomy } from '../../src/taxonomy/schema.js';
import { runCli } from '../helpers/cli.js';
import { LONG_TEST_MS, treeProbe } from '../helpers/progress.js';
import { fastSimConfig, pyenvPython, tempDir, writeJsonl } from '../helpers/run-setup.js';
import { chromium, findChromium } from './chromium.js';
import { writeOverlapRun } from './fixture.js';
import { countColor, decodePng, inkShare } from './png.js';

const CI = process.env.CI === 'true';
const python = pyenvPython();
const chrome = findChromium();
if (!python && !CI) console.warn('skipping the report/DuckDB checks: no Python with pyarrow and duckdb (scripts/pyenv.sh failed)');
if (!chrome && !CI) console.warn('skipping the headless-Chromium report checks: no chromium on PATH (Debian: apt-get update && apt-get install -y chromium, or set CHROMIUM_BIN)');

type Row = Record<string, unknown>;
interface Check {
  fp: { fp_models: Row[]; fp_category_steps: Row[]; fp_leaves: Row[]; fp_correctness: Row[] };
  sql: { models: Row[]; category_steps: Row[]; leaves: Row[]; leaf_steps: Row[]; correctness: Row[] };
}

// ---- reading numbers back out of the DOM Chromium dumps ------------------------------------

const decode = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
function attrs(tag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of tag.matchAll(/([\w:-]+)="([^"]*)"/g)) out[m[1]!] = decode(m[2]!);
  return out;
}
const elements = (html: string, name: string) => [...html.matchAll(new RegExp(`<${name}\\b([^>]*)>([\\s\\S]*?)</${name}>`, 'g'))].map((m) => ({ attrs: attrs(m[1]!), body: m[2]! }));
const openTags = (html: string, name: string) => [...html.matchAll(new RegExp(`<${name}\\b([^>]*)>`, 'g'))].map((m) => attrs(m[1]!));
const texts = (svg: string) => [...svg.matchAll(/<text\b[^>]*>([^<]*)<\/text>/g)].map((m) => decode(m[1]!));

function chart(dom: string, kind: string, generator: string) {
  const svg = elements(dom, 'svg').find((s) => s.attrs['data-chart'] === kind && s.attrs['data-generator'] === generator);
  expect(svg, `${kind} chart for ${generator}`).toBeDefined();
  const bars = openTags(svg!.body, 'rect').filter((r) => r['data-value'] !== undefined);
  const values = new Map(bars.map((r) => [`${r['data-row']}|${r['data-key']}`, Number(r['data-value'])]));
  // Drawn length per unit: the same for every bar of a chart, or the picture lies about the numbers.
  const perUnit = bars.filter((r) => Number(r.width) > 1).map((r) => Number(r.width) / Number(r['data-value']));
  return { body: svg!.body, values, labels: texts(svg!.body), perUnit };
}

/** data-field -> value of the <span>s in the table row with these data-* attributes. */
function tableRow(dom: string, match: Record<string, string>): Record<string, number> {
  const tr = elements(dom, 'tr').find((t) => Object.entries(match).every(([k, v]) => t.attrs[k] === v));
  expect(tr, JSON.stringify(match)).toBeDefined();
  return Object.fromEntries(openTags(tr!.body, 'span').map((s) => [s['data-field']!, Number(s['data-value'])]));
}

describe('fingerprint report over a simulated run', () => {
  const dir = tempDir('report');
  const shards = join(dir, 'out');
  const overlap = join(dir, 'overlap');
  const reportDir = join(dir, 'report');
  let check: Check;
  let html = '';
  let stdout = '';

  beforeAll(async () => {
    // Correctness rides in meta (the shards keep meta, not gold): clean traces are mostly right.
    const records = syntheticRecords(240, { seed: 23 }).map((r, i) => ({ ...r, meta: { ...r.meta, final_answer_correct: r.gold!.first_error_step === null ? createRng(['fac', i]).next() < 0.9 : createRng(['fac', i]).next() < 0.2 } }));
    const input = writeJsonl(join(dir, 'in.jsonl'), records);
    const config = fastSimConfig(dir, { taxonomy: { batch_size: 6 } }, { severity_mix: { neutral: 0.05, minor: 0.2, major: 0.4, fatal: 0.35 } });
    YAML.parse(readFileSync(config, 'utf8')); // sanity: the helper wrote valid YAML
    const run = await runCli(['run', '--config', config, '--input', input, '--out', shards, '--concurrency', '24', '--range-records', '100', '--progress', 'none'], { progress: treeProbe(shards) });
    expect(run.code, run.stderr).toBe(0);
    // A second, hand-made run: defects overlapping on steps, unassigned ones, records without a verdict.
    await writeOverlapRun(overlap, 'model-c');
    const rep = await runCli(['report', '--shards', shards, overlap, '--out', reportDir, '--title', 'Simulated fingerprints']);
    expect(rep.code, rep.stderr).toBe(0);
    stdout = rep.stdout;
    html = readFileSync(join(reportDir, 'report.html'), 'utf8');
    if (python) check = JSON.parse(execFileSync(python, ['test/report/check_report.py', `${shards},${overlap}`, reportDir], { encoding: 'utf8', maxBuffer: 64 << 20 }));
  }, LONG_TEST_MS);

  it('writes the four tables and one self-contained page', () => {
    expect(stdout).toMatch(/generators: model-a \(\d+ traces, \d+ defects\), model-b \(\d+ traces, \d+ defects\), model-c/);
    expect(html).not.toMatch(/<script(?![^>]*application\/json)/); // no executable script
    expect(html).not.toMatch(/(src|href)="https?:/); // nothing fetched from the network
    expect(html).toContain('id="fingerprint-data"');
  });

  describe.skipIf(!python && !CI)('numbers', () => {
    it('the fingerprint tables equal SQL over the shards (DuckDB)', () => {
      expect(python, 'scripts/pyenv.sh must provide pyarrow + duckdb in CI').toBeTruthy();
      const { fp, sql } = check;
      expect(fp.fp_models.map((m) => m.generator)).toEqual(['model-a', 'model-b', 'model-c']);
      const c = fp.fp_models.find((m) => m.generator === 'model-c')!;
      expect(Number(c.traces_without_verdict)).toBeGreaterThan(0);
      expect(Number(c.unassigned_defects)).toBeGreaterThan(0);
      // Overlaps make "once per category at the highest severity" matter: fewer than one per citation.
      expect(Number(c.flagged_steps)).toBeLessThan(fp.fp_leaves.filter((l) => l.generator === 'model-c').reduce((a, l) => a + Number(l.flagged_steps), 0));
      for (const m of sql.models) {
        const f = fp.fp_models.find((x) => x.generator === m.generator)!;
        for (const k of Object.keys(m)) expect(Number(f[k]), `${String(m.generator)} ${k}`).toBe(Number(m[k]));
      }
      const nonzero = fp.fp_category_steps.filter((r) => Number(r.flagged_steps) > 0).map((r) => [r.generator, r.category_id, r.severity, Number(r.flagged_steps)]);
      expect(new Set(nonzero.map((r) => JSON.stringify(r)))).toEqual(new Set(sql.category_steps.map((r) => JSON.stringify([r.generator, r.category_id, r.severity, Number(r.flagged_steps)]))));
      expect(fp.fp_leaves).toHaveLength(sql.leaves.length);
      for (const l of sql.leaves) {
        const f = fp.fp_leaves.find((x) => x.generator === l.generator && x.leaf_id === l.leaf_id)!;
        expect([Number(f.defects), Number(f.fatal_defects)]).toEqual([Number(l.defects), Number(l.fatal_defects)]);
        expect(Number(f.pct_of_defects)).toBeCloseTo(Number(l.pct_of_defects), 9);
      }
      for (const s of sql.leaf_steps) expect(Number(fp.fp_leaves.find((x) => x.generator === s.generator && x.leaf_id === s.leaf_id)![`steps_${String(s.severity)}`])).toBe(Number(s.flagged_steps));
      const asBool = (v: unknown) => (v === null ? null : v === 'true' || v === true);
      expect(fp.fp_correctness.map((c) => [c.generator, c.final_answer_correct, Number(c.traces), Number(c.defects), Number(c.fatal_defects)]).sort()).toEqual(
        sql.correctness.map((c) => [c.generator, asBool(c.final_answer_correct), Number(c.traces), Number(c.defects), Number(c.fatal_defects)]).sort(),
      );
      // The simulated run has both right and wrong answers, and wrong ones carry more defects.
      const a = fp.fp_correctness.filter((c) => c.generator === 'model-a');
      expect(Number(a.find((c) => c.final_answer_correct === false)!.defects_per_trace)).toBeGreaterThan(Number(a.find((c) => c.final_answer_correct === true)!.defects_per_trace));
    });
  });

  describe.skipIf(!chrome && !CI)('in headless Chromium', () => {
    const url = () => pathToFileURL(join(reportDir, 'report.html')).href;
    let dom = '';
    // Under CI=true a missing Chromium fails each test here (locally the block is skipped).
    const needChrome = () => expect(chrome, 'Chromium is required in CI (.ci/run installs Debian chromium; or set CHROMIUM_BIN)').toBeTruthy();
    beforeAll(async () => {
      if (!chrome) return;
      const r = await chromium(chrome, ['--dump-dom', url()]);
      expect(r.code, r.stderr.slice(-2000)).toBe(0);
      dom = r.stdout;
    }, 90_000);

    it('renders the charts: SVG with bars and the category labels', () => {
      needChrome();
      const names = loadTaxonomy().categories.map((c) => c.name);
      for (const g of ['model-a', 'model-b', 'model-c']) {
        const c = chart(dom, 'category-severity', g);
        for (const n of names) expect(c.labels, `${g}: ${n}`).toContain(n);
        expect(c.values.size).toBeGreaterThan(3);
        for (const k of [c, chart(dom, 'top-leaves', g), chart(dom, 'correctness', g)]) for (const u of k.perUnit) expect(u).toBeCloseTo(k.perUnit[0]!, 1);
        expect(chart(dom, 'top-leaves', g).values.size).toBeGreaterThan(3);
        expect(chart(dom, 'correctness', g).values.size).toBeGreaterThan(1);
      }
      expect(openTags(dom, 'rect').length).toBeGreaterThan(40);
    });

    it("the page's numbers equal DuckDB over the fingerprint Parquet tables", () => {
      needChrome();
      expect(python, 'needs the DuckDB check').toBeTruthy();
      const { fp } = check;
      for (const m of fp.fp_models) {
        const g = String(m.generator);
        const row = tableRow(dom, { 'data-table': 'fp_models', 'data-generator': g });
        for (const k of ['traces', 'steps', 'defects', 'fatal_defects', 'flagged_steps', 'flagged_fatal', 'flagged_major', 'flagged_minor', 'flagged_neutral', 'unassigned_defects', 'correct_traces', 'traces_with_correctness']) expect(row[k], `${g} ${k}`).toBe(Number(m[k]));
        // Category chart: one bar segment per non-zero (category, severity), same value.
        const cat = chart(dom, 'category-severity', g);
        const want = fp.fp_category_steps.filter((r) => r.generator === g && Number(r.flagged_steps) > 0);
        expect(cat.values.size).toBe(want.length);
        for (const r of want) expect(cat.values.get(`${String(r.category_id)}|${String(r.severity)}`)).toBe(Number(r.flagged_steps));
        // Leaf table and the top-leaves chart.
        const top = chart(dom, 'top-leaves', g);
        for (const l of fp.fp_leaves.filter((x) => x.generator === g)) {
          const tr = tableRow(dom, { 'data-table': 'fp_leaves', 'data-generator': g, 'data-leaf': String(l.leaf_id) });
          expect(tr.defects).toBe(Number(l.defects));
          expect(tr.pct_of_defects).toBeCloseTo(Number(l.pct_of_defects), 9);
          expect(tr.flagged_steps).toBe(Number(l.flagged_steps));
          for (const s of ['fatal', 'major', 'minor', 'neutral']) {
            const v = top.values.get(`${String(l.leaf_id)}|${s}`);
            if (v !== undefined) expect(v).toBe(Number(l[`steps_${s}`]));
          }
        }
        // Correctness chart and table.
        const cor = chart(dom, 'correctness', g);
        for (const c of fp.fp_correctness.filter((x) => x.generator === g)) {
          const name = c.final_answer_correct === null ? 'unknown' : c.final_answer_correct ? 'correct' : 'wrong';
          const tr = tableRow(dom, { 'data-table': 'fp_correctness', 'data-generator': g, 'data-correct': String(c.final_answer_correct) });
          expect([tr.traces, tr.defects, tr.fatal_defects]).toEqual([Number(c.traces), Number(c.defects), Number(c.fatal_defects)]);
          expect(tr.defects_per_trace).toBeCloseTo(Number(c.defects_per_trace), 9);
          if (Number(c.defects_per_trace) > 0) expect(cor.values.get(`${name}:defects|defects_per_trace`)).toBeCloseTo(Number(c.defects_per_trace), 9);
          if (Number(c.fatal_per_trace) > 0) expect(cor.values.get(`${name}:fatal|fatal_per_trace`)).toBeCloseTo(Number(c.fatal_per_trace), 9);
        }
      }
    });

    it('a screenshot shows the charts: not blank, severity colours on screen', async () => {
      needChrome();
      const png = join(dir, 'report.png');
      const r = await chromium(chrome!, [`--screenshot=${png}`, '--window-size=1280,1600', url()]);
      expect(r.code, r.stderr.slice(-2000)).toBe(0);
      const img = decodePng(readFileSync(png));
      expect([img.width, img.height]).toEqual([1280, 1600]);
      expect(inkShare(img)).toBeGreaterThan(0.03);
      expect(countColor(img, SEVERITY_COLORS.fatal)).toBeGreaterThan(300);
      expect(countColor(img, SEVERITY_COLORS.major)).toBeGreaterThan(300);
    }, 90_000);
  });
});
