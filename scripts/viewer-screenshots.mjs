// Screenshots of `reasoning-jury view` for docs/viewer.md, taken with the real Chromium:
//   npm run build && node scripts/viewer-screenshots.mjs
// Judges a small synthetic set with the built-in simulator (deliberation, taxonomy on), serves it
// with `view`, and saves the records table, one record and the overview (light), plus the record
// in the dark theme (at its jurors and deliberation), under docs/images/.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import puppeteer from 'puppeteer-core';
import { syntheticRecords } from '../dist/src/sim/synthetic.js';

const root = resolve(import.meta.dirname, '..');
const bin = join(root, 'dist/cli/main.js');
const dir = mkdtempSync(join(tmpdir(), 'rj-shots-'));
const out = join(dir, 'out');
writeFileSync(join(dir, 'in.jsonl'), syntheticRecords(60, { seed: 11, cleanShare: 0.3 }).map((r) => JSON.stringify(r)).join('\n') + '\n');
writeFileSync(join(dir, 'jury.yaml'), [
  'endpoints:', '  sim: { kind: simulator }',
  'jurors:', ...['a', 'b', 'c'].map((x) => `  - { id: juror-${x}, endpoint: sim, model: sim-juror-${x} }`),
  'consolidator: { id: consolidator, endpoint: sim, model: sim-consolidator }',
  'moderator: { id: moderator, endpoint: sim, model: sim-moderator }',
  'mode: deliberation', 'taxonomy: {}',
  'filter:', '  rules:', '    - { name: fatal_defect, min_impact: fatal, decision: drop }', '    - { name: some_dissent, has_dissent: true, decision: review }', '  default: keep', '',
].join('\n'));
execFileSync(process.execPath, [bin, 'run', '-c', join(dir, 'jury.yaml'), '-i', join(dir, 'in.jsonl'), '-o', out, '--progress', 'none'], { stdio: 'inherit' });

const chromium = execFileSync('sh', ['-c', 'command -v chromium || command -v chromium-browser'], { encoding: 'utf8' }).trim();
const view = spawn(process.execPath, [bin, 'view', out, '--port', '0', '--reviewer', 'ana'], { stdio: ['ignore', 'pipe', 'inherit'] });
const url = await new Promise((res) => {
  let text = '';
  view.stdout.on('data', (d) => {
    text += d;
    const u = /at (http:\/\/\S+)/.exec(text)?.[1];
    if (u && /ready/.test(text)) res(u);
  });
});
const browser = await puppeteer.launch({ executablePath: chromium, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 800, deviceScaleFactor: 1 });
  const shot = async (hash, file, theme = 'light', scrollTo = null) => {
    await page.goto(`${url}${hash}`);
    await page.evaluate((t) => localStorage.setItem('rj-theme', t), theme);
    await page.reload();
    await page.waitForFunction((h) => document.getElementById('main')?.dataset.rendered === h, {}, hash);
    // A record: from its first flagged step, where the marked evidence, the defects and the jurors are.
    if (scrollTo) await page.evaluate((sel) => { const el = document.querySelector(sel); if (el) window.scrollTo(0, el.getBoundingClientRect().top + window.scrollY - 140); }, scrollTo);
    await page.screenshot({ path: join(root, 'docs/images', file) });
    console.log(`docs/images/${file}`);
  };
  const res = await (await fetch(`${url}api/records?sort=defects&dir=desc&decision=review&limit=1`)).json();
  await shot('#/records?sort=defects&dir=desc', 'viewer-records.png');
  await shot(`#/record/${encodeURIComponent(res.rows[0].id)}?decision=review`, 'viewer-record-top.png');
  await page.setViewport({ width: 1280, height: 1400, deviceScaleFactor: 1 });
  await shot(`#/record/${encodeURIComponent(res.rows[0].id)}?decision=review`, 'viewer-record.png', 'light', 'li.step:is(.sev-minor,.sev-major,.sev-fatal)');
  await shot('#/overview', 'viewer-overview.png');
  await page.setViewport({ width: 1280, height: 800, deviceScaleFactor: 1 });
  await shot(`#/record/${encodeURIComponent(res.rows[0].id)}?decision=review`, 'viewer-record-dark.png', 'dark', 'section:has(.jurors)');
} finally {
  await browser.close();
  view.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
