import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalObjectStore } from '../../src/pipeline/storage/object-store.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { runCli } from '../helpers/cli.js';
import { LONG_TEST_MS, treeProbe } from '../helpers/progress.js';
import { fastSimConfig, tempDir } from '../helpers/run-setup.js';

/** 1,000 malformed lines of many kinds, interleaved with good records. */
function badLines(): Buffer[] {
  const good = syntheticRecords(1, { seed: 2 })[0]!;
  const kinds: Array<(i: number) => Buffer | string> = [
    (i) => `{"id": "broken-${i}", "problem": `, // truncated JSON
    (i) => `{"id": "b${i}" "problem": "x"}`, // missing comma
    () => '[1, 2, 3]', // not an object
    () => '42',
    () => 'null',
    () => '"just a string"',
    (i) => JSON.stringify({ id: `noproblem-${i}`, trace: 'A.\n\nB.' }), // missing field
    (i) => JSON.stringify({ problem: 'p', trace: `no id ${i}.` }), // missing id
    (i) => JSON.stringify({ id: `num-${i}`, problem: 5, trace: 'A.' }), // wrong type
    (i) => JSON.stringify({ id: `steps-${i}`, problem: 'p', steps: 'not a list' }),
    (i) => JSON.stringify({ id: `steps2-${i}`, problem: 'p', steps: [1, 2] }),
    (i) => JSON.stringify({ id: `empty-${i}`, problem: 'p', trace: '' }), // empty trace
    (i) => JSON.stringify({ id: `blank-${i}`, problem: 'p', trace: '   \n\n  ' }),
    (i) => JSON.stringify({ id: `emptysteps-${i}`, problem: 'p', steps: [] }),
    (i) => Buffer.concat([Buffer.from(`{"id": "utf8-${i}", "problem": "caf`), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('", "trace": "A."}')]), // invalid UTF-8
    () => JSON.stringify({ id: '', problem: 'p', trace: 'A.' }), // empty id
    (i) => JSON.stringify({ id: `gold-${i}`, problem: 'p', trace: 'A.', gold: { error_steps: ['x'] } }),
    (i) => `${'['.repeat(5000)}${']'.repeat(5000)}`.replace(/^/, `{"id":"deep-${i}","problem":"p","trace":`) + '}', // deep nesting
  ];
  const lines: Buffer[] = [];
  for (let i = 0; i < 995; i++) {
    const l = kinds[i % kinds.length]!(i);
    lines.push(typeof l === 'string' ? Buffer.from(l) : l);
  }
  // A 10 MB trace, a trace with 20,000 steps, 3,000 steps (over segmentation.max_steps), a 10 MB line of garbage.
  lines.push(Buffer.from(JSON.stringify({ ...good, id: 'huge-trace', trace: 'x. '.repeat(3_500_000) })));
  lines.push(Buffer.from(JSON.stringify({ id: 'many-steps', problem: 'p', steps: Array.from({ length: 20_000 }, (_, k) => `s${k}.`) })));
  lines.push(Buffer.from(JSON.stringify({ id: 'over-max-steps', problem: 'p', steps: Array.from({ length: 3_000 }, (_, k) => `s${k}.`) })));
  lines.push(Buffer.from('z'.repeat(10 * 1024 * 1024)));
  lines.push(Buffer.from('{"id": "unterminated'));
  return lines;
}

describe('bad input never crashes the stage and loses nothing', () => {
  it('1,000 malformed lines mixed with 300 good ones: in = results + dead letters, every dead letter has a reason', async () => {
    const dir = tempDir('bad');
    const good = syntheticRecords(300, { seed: 4 }).map((r) => Buffer.from(JSON.stringify(r)));
    const bad = badLines();
    expect(bad).toHaveLength(1000);
    const lines: Buffer[] = [];
    for (let i = 0, g = 0, b = 0; g < good.length || b < bad.length; i++) {
      if (i % 4 === 0 && g < good.length) lines.push(good[g++]!);
      else if (b < bad.length) lines.push(bad[b++]!);
      else lines.push(good[g++]!);
      if (i % 97 === 0) lines.push(Buffer.from('')); // blank lines are skipped, not records
    }
    const input = join(dir, 'mixed.jsonl');
    writeFileSync(input, Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\n')])));
    const out = join(dir, 'out');
    const res = await runCli(['run', '--config', fastSimConfig(dir), '--input', input, '--out', out, '--range-records', '200', '--progress', 'none'], { progress: treeProbe(out) });
    expect(res.code, res.stderr).toBe(0);
    const store = new LocalObjectStore(out);
    const verdicts = await readCommittedRows(store, 'verdicts');
    const dead = await readCommittedRows(store, 'dead_letters');
    const records = lines.filter((l) => l.length > 0).length;
    expect(verdicts.length + dead.length).toBe(records);
    expect(verdicts.length).toBe(300);
    expect(dead.length).toBe(1000);
    for (const d of dead) expect(String(d.error).length, JSON.stringify(d).slice(0, 200)).toBeGreaterThan(5);
    // Positions are unique and cover every non-blank line.
    const offsets = new Set([...verdicts, ...dead].map((r) => Number(r.source_offset)));
    expect(offsets.size).toBe(records);
    const reasons = dead.map((d) => String(d.error));
    for (const re of [/JSON/i, /UTF-8/i, /trace .*over the .* limit|over the \d+ MB/i, /steps/i, /problem/i, /id/]) {
      expect(reasons.some((r) => re.test(r)), `a dead letter matching ${re}`).toBe(true);
    }
    expect(res.stdout).toMatch(/dead letters\s+1000/);
    expect(res.stdout).toMatch(/judged\s+300/);
  }, LONG_TEST_MS);
});
