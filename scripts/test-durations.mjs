// Writes test/durations.json from a vitest JSON report: the wall seconds of every test file that
// took at least MIN_S. The suite's sequencer (test/helpers/sequencer.ts) starts the longest files
// first, so a file that mostly waits (an outage window, a broker restart, a real model) overlaps
// the CPU-bound ones instead of running alone at the end. Refresh after a suite run:
//   node scripts/test-durations.mjs .cache/vitest-report.json   (scripts/test.sh keeps that report)
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';

const MIN_S = 10;
const [report = '.cache/vitest-report.json'] = process.argv.slice(2);
const { testResults } = JSON.parse(readFileSync(report, 'utf8'));
const seconds = Object.fromEntries(
  testResults
    .map((f) => [relative(process.cwd(), f.name), Math.round((f.endTime - f.startTime) / 1000)])
    .filter(([, s]) => s >= MIN_S)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)),
);
writeFileSync('test/durations.json', `${JSON.stringify({ about: `wall seconds of the test files that took ${MIN_S} s or more in one run of the suite (scripts/test-durations.mjs)`, seconds }, null, 2)}\n`);
console.log(`test/durations.json: ${Object.keys(seconds).length} files`);
