import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SHARD_TABLE_NAMES } from '../../schemas/outputs.js';
import { RepairRow } from '../../schemas/repair.js';
import { buildTable } from '../../src/pipeline/commit/arrow-schema.js';
import { LocalObjectStore } from '../../src/pipeline/storage/object-store.js';
import { toArrowIpc, toParquet } from '../../src/pipeline/commit/shard-format.js';
import { ShardCommitter } from '../../src/pipeline/commit/shard-commit.js';
import type { ShardRows } from '../../src/pipeline/sink.js';
import { analyzeRepairs, DEFAULT_REPAIR_ANALYSIS, type RepairAnalysis } from '../../src/eval/repair/analyze.js';
import { runCli } from '../helpers/cli.js';
import { subgateRows } from '../../src/eval/repair/subgate.js';
import { verdictRows } from '../shards/synth.js';
import { HAND_ORIGINALS, HAND_SEVERITY, handRows } from './repair-helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'rj-eval-repair-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const originals = join(tmp, 'originals.jsonl');
writeFileSync(originals, HAND_ORIGINALS.map((o) => JSON.stringify(o)).join('\n') + '\n');
const OPTS = { ...DEFAULT_REPAIR_ANALYSIS, resamples: 400, seed: 9 };
const FLAGS = ['--originals', originals, '--boot-resamples', '400', '--boot-seed', '9', '--format', 'json'];
/** What the CLI must print: the analysis of the same rows in-process (JSON drops NaN to null, as the CLI's output does). */
const FROM_FILE = { from: 'file', location: originals } as const;
const expected = (): RepairAnalysis => JSON.parse(JSON.stringify(analyzeRepairs(handRows(), HAND_ORIGINALS, OPTS, FROM_FILE))) as RepairAnalysis;

describe('reasoning-jury eval repair', () => {
  it('reads a Parquet file of repairs rows written with the shard writer and prints the analysis', async () => {
    const file = join(tmp, 'repairs.parquet');
    writeFileSync(file, toParquet(buildTable(RepairRow, handRows())));
    const r = await runCli(['eval', 'repair', file, ...FLAGS]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const got = JSON.parse(r.stdout) as RepairAnalysis;
    expect(got).toEqual(expected());
    expect(got.originals).toEqual({ ...FROM_FILE, records: HAND_ORIGINALS.length, no_reference: HAND_ORIGINALS.filter((o) => o.correct === null).length });
    expect(got.transitions.map((t) => [t.condition, t.fixed, t.regressed, t.net])).toEqual([['steps', 1, 1, 0], ['full', 2, 1, 1]]);
    const md = await runCli(['eval', 'repair', file, '--originals', originals, '--boot-resamples', '400']);
    expect(md.code).toBe(0);
    expect(md.stdout).toContain('## Corpus accuracy under each gate');
    expect(md.stdout).toMatch(/\| any_defect \| full − steps \| 5 +\| 3 +\|/);
  });

  it('reads an Arrow IPC file the same way, and --attempts any counts a later right attempt', async () => {
    const file = join(tmp, 'repairs.arrow');
    writeFileSync(file, toArrowIpc(buildTable(RepairRow, handRows())));
    const r = await runCli(['eval', 'repair', file, ...FLAGS, '--attempts', 'any']);
    expect(r.code).toBe(0);
    const got = JSON.parse(r.stdout) as RepairAnalysis;
    expect(got).toEqual(JSON.parse(JSON.stringify(analyzeRepairs(handRows(), HAND_ORIGINALS, { ...OPTS, attempts: 'any' }, FROM_FILE))));
    expect(got.transitions[0]).toMatchObject({ condition: 'steps', fixed: 2 });
  });

  it('usage errors exit 2 with one line: no such output, an output without a repairs table, bad options', async () => {
    const none = await runCli(['eval', 'repair', join(tmp, 'absent')]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no such output folder or file');
    // A committed output without a repairs table (a run with repair off: no part for it).
    const out = join(tmp, 'judged');
    mkdirSync(out);
    const off = SHARD_TABLE_NAMES.filter((t) => (t as string) === 'repairs');
    await new ShardCommitter(new LocalObjectStore(out), { off }).commit({ source: 'file', first: 'a', last: 'b', tables: {} });
    const empty = await runCli(['eval', 'repair', out]);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('has no committed repairs table');
    // `eval` itself still needs -b (checked by eval, so that `eval repair` does not need it).
    const noBenchmark = await runCli(['eval']);
    expect(noBenchmark.code).toBe(2);
    expect(noBenchmark.stderr).toContain("required option '-b, --benchmark <name>' not specified");
    const bad = await runCli(['eval', 'repair', join(tmp, 'repairs.parquet'), '--compare', 'full,full']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--compare must name two different conditions');
  });

  it('--subgate fatal reads the judged output\'s committed verdicts and adds the any_defect/fatal gate', async () => {
    const judged = join(tmp, 'judged-verdicts');
    mkdirSync(judged);
    const ids = [...HAND_SEVERITY.keys()];
    const verdicts = verdictRows(ids.length, 1, 'file').map((v, i) => ({ ...v, record_id: ids[i]!, max_impact: HAND_SEVERITY.get(ids[i]!)! }));
    await new ShardCommitter(new LocalObjectStore(judged)).commit({ source: 'file', first: 'r1', last: 'r6', tables: { verdicts } });
    const r = await runCli(['eval', 'repair', join(tmp, 'repairs.parquet'), ...FLAGS, '--subgate', 'fatal', '--judged', judged]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const rows = handRows();
    expect(JSON.parse(r.stdout)).toEqual(JSON.parse(JSON.stringify(analyzeRepairs([...rows, ...subgateRows(rows, HAND_SEVERITY, 'fatal')], HAND_ORIGINALS, OPTS, FROM_FILE))));
    const noVerdicts = await runCli(['eval', 'repair', join(tmp, 'repairs.parquet'), '--subgate', 'fatal']);
    expect(noVerdicts.code).toBe(2);
    expect(noVerdicts.stderr).toContain('has no committed verdicts');
  });

  it('reads the committed repairs table of an output through its manifests (two ranges)', async () => {
    const out = join(tmp, 'repaired');
    mkdirSync(out);
    const committer = new ShardCommitter(new LocalObjectStore(out));
    const rows = handRows();
    const cut = rows.findIndex((r) => r.record_id === 'r4');
    await committer.commit({ source: 'file', first: 'r0001', last: 'r0003', tables: { repairs: rows.slice(0, cut) } as unknown as ShardRows });
    await committer.commit({ source: 'file', first: 'r0004', last: 'r0007', tables: { repairs: rows.slice(cut) } as unknown as ShardRows });
    // A part without a manifest is never read.
    writeFileSync(join(out, 'stray.parquet'), toParquet(buildTable(RepairRow, rows.slice(0, 2))));
    const r = await runCli(['eval', 'repair', out, ...FLAGS]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(expected());
  });
});
