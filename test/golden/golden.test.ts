// Behaviour is unchanged by the restructure: the code as it stood before it (REFERENCE below)
// and the current code judge the same input with the same response cache, and every shard
// part they write is byte-identical, except where a later issue changed a table on purpose
// (INTENDED below): those parts are compared row by row with exactly that change mapped back.
// The reference fills the cache, so the current code's model layer must also replay the old
// cache format exactly.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { buildSync } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { readParquetRows } from '../../src/pipeline/commit/shard-read.js';
import { BIN } from '../helpers/cli.js';
import { tempDir } from '../helpers/run-setup.js';

type Row = Record<string, unknown>;
interface Intended {
  /** why the table's bytes changed */
  why: string;
  /** a current row mapped back to what the reference wrote; `unjudged` holds the ids of records without a verdict */
  asReference(row: Row, unjudged: ReadonlySet<unknown>): Row;
}

/** Tables changed on purpose since the reference; every other part must be byte-identical. */
const INTENDED: Record<string, Intended> = {
  verdicts: {
    why: 'issue 13: `n_dissent` added; `cost_usd` null (not 0) for a record that used an unpriced model (this config prices none); issue 16: `phase1_seats` and `escalations` added, null without a cascade (a non-null value stays in the row and fails the comparison)',
    asReference: ({ n_dissent: _n, phase1_seats, escalations, ...r }) => ({ ...r, cost_usd: r.cost_usd ?? 0, ...(phase1_seats === null && escalations === null ? {} : { phase1_seats, escalations }) }),
  },
  steps: {
    why: 'issue 18: `label` nullable, null (not false) on the steps of a record without a verdict',
    asReference: (r, unjudged) => (unjudged.has(r.record_id) ? { ...r, label: false } : r),
  },
};
const intendedTable = (key: string): string | undefined => Object.keys(INTENDED).find((t) => key.startsWith(`${t}/`));

/** Rows of every parquet part of the intended tables, mapped back to the reference's form. */
async function intendedRows(dir: string, mapBack: boolean, skip: ReadonlySet<string> = new Set()): Promise<Record<string, Row[]>> {
  const parts = Object.keys(partHashesOf(dir)).filter((k) => intendedTable(k) !== undefined && k.endsWith('.parquet') && !skip.has(k)).sort();
  const read = async (k: string) => (await readParquetRows(readFileSync(join(dir, k)))) as Row[];
  const unjudged = new Set<unknown>();
  for (const k of parts.filter((p) => p.startsWith('verdicts/'))) for (const v of await read(k)) if (v.error !== null) unjudged.add(v.record_id);
  const out: Record<string, Row[]> = {};
  for (const k of parts) {
    const t = INTENDED[intendedTable(k)!]!;
    out[k] = (await read(k)).map((r) => (mapBack ? t.asReference(r, unjudged) : r));
  }
  return out;
}

/** Last commit before the stage was restructured into steps (issue 12). */
const REFERENCE = '0f8a338';
const root = process.cwd();
const hasReference = (() => {
  try {
    execFileSync('git', ['cat-file', '-e', `${REFERENCE}^{commit}`], { cwd: root, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** Runs a built CLI to its end; the run is bounded, so the test's own timeout is the only clock. */
function cli(bin: string, args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

/** sha256 of every shard part (manifests hold a commit time, so they are compared by content below). */
function partHashesOf(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (!p.includes('_commits') && !p.includes('_lease')) out[relative(dir, p)] = createHash('sha256').update(readFileSync(p)).digest('hex');
    }
  };
  walk(dir);
  return out;
}

/** Every TypeScript source under `dirs` of `root` (declaration files left out). */
const tsFiles = (root: string, dirs: string[]): string[] =>
  dirs.flatMap((d) => readdirSync(join(root, d), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')).map((f) => join(root, d, f)));

/** The manifests of an output, in range order. */
const readManifests = (dir: string): Array<{ files: Array<{ key: string; table: string; rows: number }>; rows: Record<string, number>; [k: string]: unknown }> =>
  readdirSync(join(dir, '_commits')).sort().map((f) => JSON.parse(readFileSync(join(dir, '_commits', f), 'utf8')));

/**
 * Files the reference never wrote: the zero-row part of every table without rows in a range
 * and the curated corpus (issue 13), taken from the manifests; the output's dataset card
 * (README.md) and its schema parts under _card/ (issue 38), which must be there. All are
 * checked to be on disk and left out of the comparison; every part the reference wrote must
 * still be there.
 */
function newParts(dir: string): Set<string> {
  const keys = new Set<string>(['README.md']);
  for (const m of readManifests(dir)) for (const f of m.files) if (f.table === 'corpus' || f.rows === 0) keys.add(f.key);
  if (existsSync(join(dir, '_card'))) for (const f of readdirSync(join(dir, '_card'))) keys.add(join('_card', f));
  return keys;
}

/** What a manifest says about its range, without the commit time, the fields added since, the new parts and the intended tables' bytes. */
function manifestFacts(dir: string, added: ReadonlySet<string> = new Set()): unknown[] {
  return readManifests(dir).map((m) => {
    const { committed_at: _t, range: _r, settings: _s, extra: _e, staging: _st, checksum: _c, seal: _seal, ...facts } = m;
    // The range checksum covers the parts that changed on purpose: compare the other files' entries.
    const files = m.files.filter((e) => !added.has(e.key) && intendedTable(e.key) === undefined);
    const rows = Object.fromEntries(Object.entries(m.rows).filter(([t, n]) => t !== 'corpus' && n > 0));
    return { ...facts, files, rows };
  });
}

/** 2,000 ProcessBench records with their labels, as a user's JSONL would hold them. */
function processBench2000(path: string): void {
  const lines: string[] = [];
  for (const split of ['math', 'olympiadbench']) {
    const rows = JSON.parse(readFileSync(join(root, '..', 'shared', 'data', 'processbench', `${split}.json`), 'utf8')) as Array<{ id: string; problem: string; steps: string[]; label: number }>;
    for (const r of rows) lines.push(JSON.stringify({ id: `${split}-${r.id}`, problem: r.problem, steps: r.steps, gold: r.label >= 0 ? { first_error_step: r.label + 1 } : { error_steps: [] } }));
  }
  writeFileSync(path, `${lines.join('\n')}\n`);
}

describe.skipIf(!hasReference)(`shards are byte-identical to ${REFERENCE} with the cache on`, () => {
  const dir = tempDir('golden');
  const ref = join(dir, 'reference');
  const config = join(dir, 'jury.yaml');
  const input = join(dir, 'pb2000.jsonl');

  beforeAll(() => {
    mkdirSync(ref);
    // The reference tree, built with this checkout's dependencies. Its types were checked when
    // it was committed; here its TypeScript only needs turning into the same JavaScript, file
    // by file as tsc lays it out (dist/src/...), which esbuild does in a fraction of a second
    // where tsc spends ~15 CPU-seconds checking again. Both only strip types: the shards below
    // are compared byte for byte, so a difference between the two would fail this test.
    execFileSync('bash', ['-c', `git archive ${REFERENCE} | tar -x -C "${ref}"`], { cwd: root });
    symlinkSync(join(root, 'node_modules'), join(ref, 'node_modules'));
    buildSync({ entryPoints: tsFiles(ref, ['src', 'schemas', 'connectors']), outdir: join(ref, 'dist'), outbase: ref, format: 'esm', platform: 'node', target: 'node22', logLevel: 'warning' });
    // The embedded default jury, with the response cache on and a profile that exercises
    // repairs (malformed, fenced, prose JSON), 429s and 500s.
    const seats = ['a', 'b', 'c'].map((s, i) => `  - { id: jury-${i}, endpoint: sim, model: sim-juror-${s} }`).join('\n');
    // The profile as the reference knew it: keys added since (the Batch API's `batch:`) would
    // fail its strict schema, and they do not touch online calls.
    const profile = join(dir, 'sim-profile.yaml');
    writeFileSync(profile, execFileSync('git', ['show', `${REFERENCE}:examples/sim-profile.yaml`], { cwd: root }));
    writeFileSync(
      config,
      `endpoints:\n  sim: { kind: simulator, profile: ${profile} }\njurors:\n${seats}\n` +
        `consolidator: { id: consolidator, endpoint: sim, model: sim-consolidator }\nmode: consolidation\ncache: { enabled: true, dir: ${join(dir, 'cache')} }\n`,
    );
    processBench2000(input);
  }, 600_000);

  const both = async (name: string, args: string[]) => {
    const refOut = join(dir, `${name}-reference`);
    const curOut = join(dir, `${name}-current`);
    const a = await cli(join(ref, 'dist/src/cli/main.js'), [...args, '-o', refOut]);
    expect(a.code, a.stderr).toBe(0);
    const b = await cli(BIN, [...args, '-o', curOut]); // the bundled bin package.json names
    expect(b.code, b.stderr).toBe(0);
    return { refOut, curOut };
  };

  /** Byte-identical parts but for the intended tables (rows mapped back) and the parts the reference never wrote. */
  const expectSameShards = async (refOut: string, curOut: string) => {
    const added = newParts(curOut);
    const cur = partHashesOf(curOut);
    const ref = partHashesOf(refOut);
    for (const k of Object.keys(ref)) expect(added.has(k), `${k} was written by the reference but counts as new`).toBe(false);
    expect(Object.keys(cur).filter((k) => !added.has(k)).sort()).toEqual(Object.keys(ref).sort());
    expect(Object.keys(cur).filter((k) => added.has(k)).sort()).toEqual([...added].sort()); // every new part is on disk
    const same = (h: Record<string, string>) => Object.fromEntries(Object.entries(h).filter(([k]) => !added.has(k) && intendedTable(k) === undefined));
    expect(same(cur)).toEqual(same(ref));
    expect(manifestFacts(curOut, added)).toEqual(manifestFacts(refOut));
    expect(await intendedRows(curOut, true, added)).toEqual(await intendedRows(refOut, false));
  };

  it('the demo (bundled examples)', async () => {
    const { refOut, curOut } = await both('demo', ['run', '-c', config, '--progress', 'none']);
    expect(Object.keys(partHashesOf(curOut)).length).toBeGreaterThanOrEqual(4);
    await expectSameShards(refOut, curOut);
  }, 1_800_000);

  it('2,000 ProcessBench records in ranges of 250', async () => {
    const { refOut, curOut } = await both('pb2000', ['run', '-c', config, '-i', input, '--range-records', '250', '--concurrency', '32', '--progress', 'none']);
    expect(Object.keys(partHashesOf(curOut)).filter((k) => k.startsWith('verdicts/'))).toHaveLength(8);
    const verdicts = Object.entries(await intendedRows(curOut, false)).filter(([k]) => k.startsWith('verdicts/'));
    expect(verdicts.flatMap(([, rows]) => rows)).toHaveLength(2000);
    await expectSameShards(refOut, curOut);
  }, 1_800_000);
});
