/**
 * Issue 36 as an operator meets it, with the CLI bin:
 * - second commands (`run`, `decide`, `repair run`) started again and again against a live
 *   writer of one-record ranges are refused (exit 4) and never remove or change its files;
 * - a writer SIGKILLed while holding its lease: on this machine its pid is gone and the next
 *   run takes over at once; on another machine the next run is refused until the lease expires
 *   (read from the lease file, not timed), then takes over, or at once with --take-over;
 * - the output folder: --out inside --input (and the reverse), an unwritable --out, an --out
 *   deleted mid-run, shards list|verify of a missing folder: each one line and its exit code.
 */
import { spawn } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, linkSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalObjectStore } from '../../src/pipeline/storage/object-store.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { BIN, runCli, type CliResult } from '../helpers/cli.js';
import { gatedEndpoint, type GatedEndpoint } from '../helpers/gated-endpoint.js';
import { LONG_TEST_MS, waitForProgress } from '../helpers/progress.js';
import { tempDir, writeJsonl } from '../helpers/run-setup.js';
import { simProfile, startSimProcess, type SimProcess } from '../helpers/sim-process.js';
import { sha256Hex } from '../../src/pipeline/commit/checksum.js';

const records = syntheticRecords(30, { seed: 42, prefix: 'own' });

function config(dir: string, url: string, name = 'jury.yaml', extra: Record<string, unknown> = {}): string {
  const path = join(dir, name);
  writeFileSync(
    path,
    YAML.stringify({
      mode: 'single',
      endpoints: { sim: { base_url: url, max_concurrency: 4 } },
      jurors: [{ id: 'jury-0', endpoint: 'sim', model: 'sim-juror-a' }],
      cache: { enabled: false, dir: join(dir, 'cache') },
      input: { mapping: { reference_answer: 'answer' } },
      ...extra,
    }),
  );
  return path;
}

const manifests = (out: string): string[] => (existsSync(join(out, '_commits')) ? readdirSync(join(out, '_commits')).filter((n) => n.endsWith('.json')) : []);

/** Every file under `out` but the lease and staged parts (they move as the writer publishes), with its sha256. */
function snapshot(out: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (rel: string) => {
    for (const e of readdirSync(join(out, rel), { withFileTypes: true })) {
      const key = rel ? `${rel}/${e.name}` : e.name;
      if (key === '_lease' || key === '_staging' || e.name.endsWith('.rjtmp')) continue;
      if (e.isDirectory()) walk(key);
      else files.set(key, sha256Hex(readFileSync(join(out, key))));
    }
  };
  walk('');
  return files;
}

/** The command's fatal line(s): its own lines but warnings and notes of other components. */
const ourLines = (r: CliResult) => r.stderr.split('\n').filter((l) => l.startsWith('reasoning-jury: ') && !/^reasoning-jury: [\w-]+: (warn|info):/.test(l));

/** The `run` command line against `url` writing `out` (a config file per endpoint: a writer reads its own late). */
const runArgs = (dir: string, url: string, out: string, more: string[] = []) => ['run', '--config', config(dir, url, `jury-${new URL(url).port}.yaml`), '--input', join(dir, 'in.jsonl'), '--out', out, '--range-records', '1', '--concurrency', '1', '--progress', 'none', ...more];

/**
 * The writer's dataset card (README.md) counts `ranges` and its schema parts of tables that
 * have parts are gone: the card rewrite that follows a commit is done, so the snapshot a
 * second command is checked against does not race the writer's own card.
 */
function cardSettled(out: string, ranges: number): boolean {
  const card = join(out, 'README.md');
  if (!existsSync(card)) return false;
  const text = readFileSync(card, 'utf8');
  if (!text.includes(`\n${ranges} committed range(s).`)) return false;
  const withParts = [...text.matchAll(/^\| (\w+)[^|]*\| [^|]+ \| ([\d,]+) \|$/gm)].filter((m) => m[2] !== '0').map((m) => m[1]!);
  return withParts.length > 0 && withParts.every((t) => !existsSync(join(out, '_card', `${t}.parquet`)));
}

/** Adds o+x to every ancestor folder of `path` that lacks it; returns what puts their modes back. */
function letOthersThrough(path: string): () => void {
  const changed: Array<[string, number]> = [];
  for (let d = dirname(path); d !== dirname(d); d = dirname(d)) {
    const mode = statSync(d).mode & 0o7777;
    if ((mode & 0o001) === 0) {
      chmodSync(d, mode | 0o001);
      changed.push([d, mode]);
    }
  }
  return () => {
    for (const [d, mode] of changed) chmodSync(d, mode);
  };
}

/** A path to this process's node binary inside `dir`, which other users can reach. */
function nodeFor(dir: string): string {
  const node = join(dir, 'node');
  try {
    linkSync(process.execPath, node);
  } catch {
    copyFileSync(process.execPath, node);
  }
  chmodSync(node, 0o755);
  return node;
}

describe('who may write an output', () => {
  let sim: SimProcess;
  const gates: GatedEndpoint[] = [];
  const gate = async () => {
    const g = await gatedEndpoint(sim.url);
    gates.push(g);
    return g;
  };
  beforeAll(async () => {
    sim = await startSimProcess(simProfile(tempDir('own-sim'), 0));
  });
  afterAll(async () => {
    for (const g of gates) await g.close();
    await sim?.kill();
  });

  it('run, decide and repair run against a live writer: refused every time, the writer\'s files untouched', { timeout: LONG_TEST_MS }, async () => {
    const dir = tempDir('own-loop');
    writeJsonl(join(dir, 'in.jsonl'), records);
    // A finished output for decide and repair run to read.
    const judged = join(dir, 'judged');
    const first = await runCli(runArgs(dir, sim.url, judged, ['--range-records', '10']));
    expect(first.code, first.stderr).toBe(0);
    const repairCfg = config(dir, sim.url, 'repair.yaml', { repair: { generator: { id: 'gen', endpoint: 'sim', model: 'sim-generator' } } });
    writeFileSync(join(dir, 'policy.yaml'), YAML.stringify({ rules: [], default: 'keep' }));

    const g = await gate();
    const out = join(dir, 'out');
    // --no-preflight: the gate lets through one record's call at a time, not the preflight's.
    const writer = runCli(runArgs(dir, g.url, out, ['--no-preflight']));
    const seconds: string[][] = [
      runArgs(dir, sim.url, out),
      ['decide', '--policy', join(dir, 'policy.yaml'), '--shards', judged, '--out', out],
      ['repair', 'run', judged, '-c', repairCfg, '-o', out],
    ];
    for (let i = 0; i < 9; i++) {
      // Let the writer judge and commit one more one-record range, then start a second command.
      const before = manifests(out).length;
      g.allow(1);
      // Committed, and the writer's dataset card rewritten for it (it follows each commit).
      await waitForProgress(() => ({ done: manifests(out).length > before && cardSettled(out, manifests(out).length), progress: manifests(out).length }), { what: 'the writer committing a range' });
      const files = snapshot(out);
      const r = await runCli(seconds[i % seconds.length]!);
      expect(r.code, `${i}: ${r.stdout}${r.stderr}`).toBe(4);
      expect(ourLines(r)).toEqual([expect.stringMatching(/is being written by run \(pid \d+/)]);
      // Nothing the writer had was removed or changed (it may only have added or published).
      const after = snapshot(out);
      for (const [path, sha] of files) expect(after.get(path), path).toBe(sha);
    }
    g.open();
    const w = await writer;
    expect(w.code, w.stderr).toBe(0);
    expect((await readCommittedRows(new LocalObjectStore(out), 'verdicts')).map((v) => String(v.record_id)).sort()).toEqual(records.map((r) => r.id).sort());
    const verify = await runCli(['shards', 'verify', out]);
    expect(verify.code, verify.stdout).toBe(0);
  });

  /** Starts a writer behind a closed gate and SIGKILLs it once it holds the lease. */
  async function killedHolder(dir: string, out: string, expiry: string): Promise<void> {
    writeJsonl(join(dir, 'in.jsonl'), records);
    const g = await gate();
    const child = spawn(process.execPath, [BIN, ...runArgs(dir, g.url, out, ['--lease-expiry', expiry])], { stdio: 'ignore' });
    const leases = join(out, '_lease', 'output');
    await waitForProgress(() => ({ done: g.arrived() > 0, progress: existsSync(leases) ? readdirSync(leases).length : 0 }), { what: 'the writer taking its lease and calling a model' });
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await gone;
  }

  const leaseDir = (out: string) => join(out, '_lease', 'output');
  const leasePath = (out: string) => join(leaseDir(out), readdirSync(leaseDir(out)).sort().at(-1)!);
  const leaseFile = (out: string) => JSON.parse(readFileSync(leasePath(out), 'utf8')) as { expires_at: string; pid: number; host: string; released?: boolean };
  /** The dead holder's lease as if it had run on another machine: nothing here can tell it is gone. */
  const elsewhere = (out: string) => writeFileSync(leasePath(out), JSON.stringify({ ...leaseFile(out), host: 'another-host' }));

  const allJudged = async (out: string) => expect((await readCommittedRows(new LocalObjectStore(out), 'verdicts')).map((v) => String(v.record_id)).sort()).toEqual(records.map((r) => r.id).sort());

  it('a holder SIGKILLed on this machine: its pid is gone, so the next run takes over at once', { timeout: LONG_TEST_MS }, async () => {
    const dir = tempDir('own-kill-here');
    const out = join(dir, 'out');
    await killedHolder(dir, out, '1h');
    expect(leaseFile(out).released).toBeUndefined();
    const next = await runCli(runArgs(dir, sim.url, out));
    expect(next.code, next.stderr).toBe(0);
    await allJudged(out);
    expect((await runCli(['shards', 'verify', out])).code).toBe(0);
  });

  it('a SIGKILLed holder on another machine: refused while its lease lasts, taken over once the lease file says it expired', { timeout: LONG_TEST_MS }, async () => {
    const dir = tempDir('own-kill');
    const out = join(dir, 'out');
    await killedHolder(dir, out, '4s');
    elsewhere(out);
    const dead = leaseFile(out);
    const early = await runCli(runArgs(dir, sim.url, out));
    // Refused only while the dead holder's lease had not expired when the run looked.
    if (Date.now() < Date.parse(dead.expires_at)) {
      expect(early.code, early.stderr).toBe(4);
      expect(ourLines(early)).toEqual([expect.stringContaining(`run (pid ${dead.pid} on another-host`)]);
    }
    await waitForProgress(() => ({ done: Date.now() >= Date.parse(leaseFile(out).expires_at), progress: Date.now() }), { what: 'the dead lease expiring' });
    const late = await runCli(runArgs(dir, sim.url, out));
    expect(late.code, late.stderr).toBe(0);
    await allJudged(out);
    expect((await runCli(['shards', 'verify', out])).code).toBe(0);
  });

  it('a SIGKILLed holder on another machine with a long lease: --take-over takes it at once', { timeout: LONG_TEST_MS }, async () => {
    const dir = tempDir('own-takeover');
    const out = join(dir, 'out');
    await killedHolder(dir, out, '1h');
    elsewhere(out);
    const refused = await runCli(runArgs(dir, sim.url, out));
    expect(refused.code, refused.stderr).toBe(4);
    const taken = await runCli(runArgs(dir, sim.url, out, ['--take-over']));
    expect(taken.code, taken.stderr).toBe(0);
    await allJudged(out);
    expect(leaseFile(out).released).toBe(true);
  });

  it('--out inside --input, or --input inside --out: one line, exit 2, nothing written', async () => {
    const dir = tempDir('own-nest');
    writeJsonl(join(dir, 'in.jsonl'), records);
    const inside = await runCli(['run', '--config', config(dir, sim.url), '--input', dir, '--out', join(dir, 'out'), '--progress', 'none']);
    expect(inside.code).toBe(2);
    expect(ourLines(inside)).toEqual([`reasoning-jury: --out ${join(dir, 'out')} is inside --input ${dir}: the run would read its own shards back as input; put the output elsewhere`]);
    expect(existsSync(join(dir, 'out'))).toBe(false);
    const around = await runCli(['run', '--config', config(dir, sim.url), '--input', join(dir, 'in.jsonl'), '--out', dir, '--progress', 'none']);
    expect(around.code).toBe(2);
    expect(ourLines(around)).toEqual([expect.stringMatching(/--input .*in\.jsonl is inside --out .*: the output's files would be mixed with the input/)]);
  });

  it('an --out this user cannot write: one line naming EACCES, exit 2, before any model call', async () => {
    // root ignores permission bits, so as root the CLI runs as nobody (no read-only mount is at
    // hand for EROFS; its line is the same with "read-only file system (EROFS)").
    const asNobody = process.getuid?.() === 0;
    // The tests' temp folders are private to root: nobody reaches a folder right under /tmp.
    const dir = asNobody ? mkdtempSync('/tmp/rj-own-ro-') : tempDir('own-ro');
    chmodSync(dir, 0o755);
    writeJsonl(join(dir, 'in.jsonl'), records);
    const g = await gate();
    const cfg = config(dir, g.url);
    const locked = join(dir, 'locked');
    mkdirSync(locked);
    chmodSync(locked, 0o555);
    const out = join(locked, 'out');
    // The node binary may live where nobody cannot reach (~/.cache of root, as scripts/node.sh
    // installs it): nobody runs a link to it (a copy across file systems) in the open folder.
    const node = asNobody ? nodeFor(dir) : process.execPath;
    // The checkout may sit in a folder only root may enter (a `mktemp -d` clone): nobody gets
    // passage (o+x, no listing) through such ancestors of the bin while it runs, then not again.
    const restore = asNobody ? letOthersThrough(BIN) : () => undefined;
    const r = await new Promise<CliResult>((resolve, reject) => {
      const child = spawn(node, [BIN, 'run', '--config', cfg, '--input', join(dir, 'in.jsonl'), '--out', out, '--progress', 'none'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, HOME: dir }, ...(asNobody ? { uid: 65534, gid: 65534 } : {}) });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    }).finally(restore);
    expect(r.code, r.stderr).toBe(2);
    expect(ourLines(r)).toEqual([`reasoning-jury: --out ${out} is not writable: permission denied (EACCES); give a folder this user can write`]);
    expect(g.arrived()).toBe(0);
    rmSync(dir, { recursive: true, force: true });
  });

  it('an --out deleted mid-run stops the run with one line and exit 1; it is not recreated', { timeout: LONG_TEST_MS }, async () => {
    const dir = tempDir('own-gone');
    writeJsonl(join(dir, 'in.jsonl'), records);
    const g = await gate();
    const out = join(dir, 'out');
    const writer = runCli(runArgs(dir, g.url, out, ['--no-preflight']));
    g.allow(2);
    await waitForProgress(() => ({ done: manifests(out).length >= 2, progress: manifests(out).length }), { what: 'two committed ranges' });
    expect(manifests(out).length).toBe(2); // held there: the rest wait at the gate
    rmSync(out, { recursive: true, force: true });
    g.open();
    const r = await writer;
    expect(r.code, r.stderr).toBe(1);
    expect(ourLines(r)).toEqual([expect.stringContaining(`the output folder ${out} vanished while this command was writing it; it is not recreated`)]);
    expect(existsSync(out)).toBe(false);
  });

  it('shards list and verify of a missing folder: one line, exit 1', async () => {
    const missing = join(tempDir('own-missing'), 'nosuch');
    for (const cmd of ['list', 'verify']) {
      const r = await runCli(['shards', cmd, missing]);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(ourLines(r)).toEqual([`reasoning-jury: no output at ${missing}: nothing to ${cmd === 'list' ? 'list' : 'check'}`]);
    }
  });
});
