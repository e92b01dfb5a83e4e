import { fork, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { benchRecords, fmt, median } from './common.js';

/**
 * Whole-run speed (issue 12, point 9): the real `reasoning-jury run` against a fake
 * OpenAI-compatible endpoint in a child process (500 ms per call), beside a bare script that
 * sends the same request bodies with the same `openai` client. Both are limited to 32 calls in
 * flight and 64 calls/s, so 64 calls/s is the ceiling; the question is how close each gets and
 * how much CPU each spends per call.
 */

const LIMIT_PER_S = 64;
const IN_FLIGHT = 32;
const here = (f: string) => fileURLToPath(new URL(f, import.meta.url));
const CLI = here('../cli/main.js'); // the bundled bin (scripts/bundle.mjs), as users run it

interface FakeServer {
  url: string;
  /** Start a new measured run; `capture` receives every request body as JSONL. */
  reset(capture: string | null): Promise<void>;
  stats(): Promise<ServerStats>;
  close(): Promise<void>;
}

interface ServerStats {
  arrivals: number[];
  maxInFlight: number;
  kinds: Record<string, number>;
  connections: number;
}

async function startFakeServer(): Promise<FakeServer> {
  const child = fork(here('./whole-run-server.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const next = <T>(type: string) =>
    new Promise<T>((resolve, reject) => {
      const onMsg = (m: { type: string } & T) => {
        if (m.type !== type) return;
        child.off('message', onMsg);
        child.off('exit', onExit);
        resolve(m);
      };
      const onExit = (code: number | null) => reject(new Error(`fake server exited with code ${code}`));
      child.on('message', onMsg);
      child.once('exit', onExit);
    });
  const { url } = await next<{ url: string }>('ready');
  return {
    url,
    async reset(capture) {
      const done = next('reset');
      child.send({ type: 'reset', capture });
      await done;
    },
    async stats() {
      const s = next<ServerStats>('stats');
      child.send({ type: 'stats' });
      return s;
    },
    async close() {
      const exited = new Promise((r) => child.once('exit', r));
      child.send({ type: 'close' });
      await exited;
    },
  };
}

/** 800 ProcessBench records (gsm8k + math, as the other benchmarks use them) as the CLI's JSONL input. */
function writeInput(path: string, n: number): string {
  const { records, source } = benchRecords(n);
  writeFileSync(path, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return source;
}

/** The embedded default jury's shape (3 jurors + consolidation), every seat on the fake endpoint. */
function writeConfig(path: string, url: string, cacheDir: string): void {
  const models = ['sim-juror-a', 'sim-juror-b', 'sim-juror-c', 'sim-consolidator'];
  const config = {
    endpoints: { fake: { kind: 'openai', base_url: url, max_concurrency: IN_FLIGHT, requests_per_second: LIMIT_PER_S, timeout_ms: 30_000 } },
    jurors: models.slice(0, 3).map((model, i) => ({ id: `jury-${i}`, endpoint: 'fake', model })),
    consolidator: { id: 'consolidator', endpoint: 'fake', model: 'sim-consolidator' },
    mode: 'consolidation',
    cache: { enabled: false, dir: cacheDir },
    prices: Object.fromEntries(models.map((m) => [m, { input_per_mtok: 0.15, output_per_mtok: 0.62 }])),
  };
  writeFileSync(path, JSON.stringify(config, null, 2));
}

interface Measured {
  t0: number;
  wallMs: number;
  cpuMs: number;
  /** CPU the process had used when the first request reached the server (from /proc samples). */
  cpuBeforeFirstMs: (firstAt: number) => number | null;
  stdout: string;
  stderr: string;
}

const TICK_MS = 1000 / 100; // USER_HZ on Linux

/** user + system CPU of a running process from /proc, or null off Linux. */
function procCpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * TICK_MS;
  } catch {
    return null;
  }
}

/** Runs `node [nodeArgs] script args` with the CPU probe preloaded; exit CPU from the probe, the rest sampled. */
async function measure(dir: string, name: string, nodeArgs: string[], args: string[]): Promise<Measured> {
  const report = join(dir, `${name}.cpu.json`);
  const probe = pathToFileURL(here('./whole-run-cpu.js')).href;
  const t0 = Date.now();
  const child: ChildProcess = spawn(process.execPath, ['--import', probe, ...nodeArgs, ...args], { env: { ...process.env, RJ_CPU_REPORT: report }, stdio: ['ignore', 'pipe', 'pipe'] });
  const samples: Array<[number, number]> = [];
  const sampler = setInterval(() => {
    const c = procCpuMs(child.pid!);
    if (c !== null) samples.push([Date.now(), c]);
  }, 50);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  const wallMs = Date.now() - t0;
  clearInterval(sampler);
  if (code !== 0 || !existsSync(report)) throw new Error(`${name} exited with code ${code}:\n${stderr.slice(-4000)}`);
  const u = JSON.parse(readFileSync(report, 'utf8')) as { user_us: number; system_us: number };
  const cpuBeforeFirstMs = (firstAt: number) => {
    const before = samples.filter(([t]) => t <= firstAt).at(-1);
    return before ? before[1] : null;
  };
  return { t0, wallMs, cpuMs: (u.user_us + u.system_us) / 1000, cpuBeforeFirstMs, stdout, stderr };
}

interface Row {
  client: string;
  calls: number;
  wallS: number;
  firstS: number;
  /** from the last request's arrival to the client's exit: the last reply, then shards and exit */
  tailS: number;
  wholeRate: number;
  steadyRate: number;
  cpuPerCall: number;
  cpuPerCallAfterFirst: number | null;
  maxInFlight: number;
  maxPerSecond: number;
  connections: number;
}

/** Most requests that arrived within any 1-second window. */
function maxPerSecond(arrivals: readonly number[]): number {
  let best = 0;
  for (let lo = 0, hi = 0; hi < arrivals.length; hi++) {
    while (arrivals[hi]! - arrivals[lo]! >= 1000) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
}

function row(client: string, m: Measured, s: ServerStats): Row {
  const a = [...s.arrivals].sort((x, y) => x - y);
  const n = a.length;
  if (n < 10) throw new Error(`${client}: only ${n} requests reached the fake server`);
  // Steady state: the middle 80 % of the requests by arrival, leaving out ramp-up and ramp-down.
  const lo = Math.floor(n * 0.1);
  const hi = Math.ceil(n * 0.9) - 1;
  const before = m.cpuBeforeFirstMs(a[0]!);
  return {
    client,
    calls: n,
    wallS: m.wallMs / 1000,
    firstS: (a[0]! - m.t0) / 1000,
    tailS: (m.t0 + m.wallMs - a[n - 1]!) / 1000,
    wholeRate: n / (m.wallMs / 1000),
    steadyRate: (hi - lo) / ((a[hi]! - a[lo]!) / 1000),
    cpuPerCall: m.cpuMs / n,
    cpuPerCallAfterFirst: before === null ? null : (m.cpuMs - before) / n,
    maxInFlight: s.maxInFlight,
    maxPerSecond: maxPerSecond(a),
    connections: s.connections,
  };
}

/** One table row per measured run; each ratio is against the default-fetch bare run of the same round. */
function table(rounds: readonly Round[]): string {
  const lines = [
    '| round | client | calls | wall s | first request s | last request to exit s | calls/s (whole run) | calls/s (steady) | fraction of the limit (whole / steady) | CPU ms per call | CPU ms per call after the first request | ratio to bare (same round) |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  rounds.forEach((round, i) => {
    for (const r of round.rows) {
      const after = r.cpuPerCallAfterFirst === null ? '–' : fmt(r.cpuPerCallAfterFirst, 2);
      const ratio = round.bare ? fmt(r.cpuPerCall / round.bare.cpuPerCall, 2) : '–';
      lines.push(
        `| ${i + 1} | ${r.client} | ${r.calls} | ${fmt(r.wallS, 1)} | ${fmt(r.firstS, 2)} | ${fmt(r.tailS, 2)} | ${fmt(r.wholeRate, 1)} | ${fmt(r.steadyRate, 1)} | ${fmt(r.wholeRate / LIMIT_PER_S, 3)} / ${fmt(r.steadyRate / LIMIT_PER_S, 3)} | ${fmt(r.cpuPerCall, 2)} | ${after} | ${ratio} |`,
      );
    }
  });
  return lines.join('\n');
}

/**
 * The figures the targets are judged on. This machine's speed moves by up to a third between
 * minutes, for both clients alike, so one pair of runs can land on either side of 1.2: the
 * CLI and the bare client run in interleaved rounds and the medians decide.
 */
export function summary(rounds: readonly Round[]): Summary {
  const paired = rounds.filter((r): r is Round & { bare: Row } => r.bare !== undefined);
  const ratios = paired.map((r) => r.cli.cpuPerCall / r.bare.cpuPerCall);
  const withShort = paired.filter((r): r is Round & { bare: Row; short: NonNullable<Round['short']> } => r.short !== undefined);
  const marginal = withShort.map((r) => beyondShort(r.cli, r.short.cliMs, r.short.calls) / beyondShort(r.bare, r.short.bareMs, r.short.calls));
  return {
    fraction: median(rounds.map((r) => r.cli.wholeRate / LIMIT_PER_S)),
    ratio: median(ratios),
    ratios,
    cliCpu: median(rounds.map((r) => r.cli.cpuPerCall)),
    bareCpu: median(paired.map((r) => r.bare.cpuPerCall)),
    marginal,
    marginalRatio: median(marginal),
    fixedCliMs: median(withShort.map((r) => r.short.cliMs)),
    fixedBareMs: median(withShort.map((r) => r.short.bareMs)),
  };
}

export interface Summary {
  fraction: number;
  ratio: number;
  ratios: number[];
  cliCpu: number;
  bareCpu: number;
  /** per round: CLI over bare CPU per call beyond a short run */
  marginal: number[];
  marginalRatio: number;
  /** median CPU ms of a short run */
  fixedCliMs: number;
  fixedBareMs: number;
}

interface Round {
  cli: Row;
  /** the default-fetch bare client replaying this round's bodies: the reference for the ratio */
  bare?: Row;
  rows: Row[];
  /** CPU ms of a short run of each client (median of SHORT_RUNS) and its calls */
  short?: { cliMs: number; bareMs: number; calls: number };
}

/** CPU ms per call that a long run spends beyond a short run of the same client. */
export const beyondShort = (long: Row, shortMs: number, shortCalls: number): number => (long.cpuPerCall * long.calls - shortMs) / (long.calls - shortCalls);

/** One input the clients are run on: its JSONL, how many records, and where the CLI's request bodies go. */
interface Workload {
  input: string;
  records: number;
  bodies: string;
}

/** The CLI run; checks every record was judged cleanly with exactly one call per seat (no re-asks). */
async function runCli(dir: string, server: FakeServer, w: Workload, nodeArgs: string[]): Promise<Row> {
  const config = join(dir, 'jury.json');
  writeConfig(config, server.url, join(dir, 'cache'));
  await server.reset(w.bodies);
  rmSync(join(dir, 'out'), { recursive: true, force: true }); // each run judges everything again
  const extra = (process.env.WHOLE_RUN_CLI_ARGS ?? '').split(' ').filter(Boolean);
  // As many records at once as the endpoint serves calls (and the bare client keeps in flight):
  // enough to keep it full (fraction 0.976 at 32 and 0.975 at 48). Records beyond that only wait,
  // and make every part of the judging thread dearer (docs/benchmarks.md, "Whole-run speed").
  const args = [CLI, 'run', '-c', config, '-i', w.input, '-o', join(dir, 'out'), '--concurrency', String(IN_FLIGHT), '--progress', 'none', '--no-cache', ...extra];
  const m = await measure(dir, 'cli', nodeArgs, args);
  const s = await server.stats();
  const clean = /clean verdicts\s+(\d+)/.exec(m.stdout)?.[1];
  if (Number(clean) !== w.records || s.kinds.juror !== 3 * w.records || s.kinds.consolidation !== w.records) {
    throw new Error(`CLI run was not ${w.records} clean verdicts of 4 calls each: requests ${JSON.stringify(s.kinds)}\n${m.stdout}\n${m.stderr.slice(-2000)}`);
  }
  return row('`reasoning-jury run`', m, s);
}

async function runBare(dir: string, server: FakeServer, w: Workload, pooled: boolean, nodeArgs: string[]): Promise<Row> {
  await server.reset(null);
  const m = await measure(dir, pooled ? 'bare-pooled' : 'bare', nodeArgs, [here('./whole-run-bare.js'), w.bodies, server.url, ...(pooled ? ['--pooled'] : [])]);
  const s = await server.stats();
  const out = JSON.parse(m.stdout.trim().split('\n').at(-1)!) as { failed: number };
  if (out.failed > 0) throw new Error(`bare client: ${out.failed} calls failed`);
  return row(pooled ? 'bare `openai` client, the product\'s pooled fetch' : 'bare `openai` client (default fetch)', m, s);
}

/**
 * The fixed part of each client's CPU: the median of SHORT_RUNS short runs (a few records, the
 * same code path: startup, a handful of calls, one range's shards, exit). What the long run
 * spends beyond it, per extra call, is the cost that a run of days pays per call.
 */
async function shortRuns(dir: string, server: FakeServer, w: Workload, nodeArgs: string[]): Promise<{ cliMs: number; bareMs: number; calls: number }> {
  const cli: number[] = [];
  const bare: number[] = [];
  let calls = 0;
  for (let i = 0; i < SHORT_RUNS; i++) {
    const c = await runCli(dir, server, w, nodeArgs);
    const b = await runBare(dir, server, w, false, nodeArgs);
    cli.push(c.cpuPerCall * c.calls);
    bare.push(b.cpuPerCall * b.calls);
    calls = c.calls;
  }
  return { cliMs: median(cli), bareMs: median(bare), calls };
}

const SHORT_RUNS = 3;

/**
 * `npm run bench -- whole-run`. WHOLE_RUN_ROUNDS sets the interleaved rounds (default 3: CLI, then
 * the bare client on the bodies it sent, three times; the pooled-fetch side row in the first
 * round only); after each round, 3 short runs of each client on WHOLE_RUN_SHORT records (default 8,
 * at least 3; 0 skips them) split the CPU into a fixed and a per-call part; WHOLE_RUN_RECORDS
 * overrides the record count (quick checks);
 * WHOLE_RUN_NODE_ARGS adds node flags to every measured client (e.g. "--cpu-prof --cpu-prof-dir=/tmp/p");
 * WHOLE_RUN_CLI_ARGS adds arguments to `run` (e.g. "--max-heap-mb 0"); WHOLE_RUN_CLIENTS=bare,bare-pooled
 * picks the bare rows to run after the CLI (default both; `none` for CLI-only rounds); WHOLE_RUN_KEEP
 * keeps the temporary folder (input, config, the last round's bodies, shards).
 */
export async function benchWholeRun(nRecords = Number(process.env.WHOLE_RUN_RECORDS ?? 800)): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'rj-whole-'));
  const server = await startFakeServer();
  try {
    const source = writeInput(join(dir, 'input.jsonl'), nRecords);
    const long: Workload = { input: join(dir, 'input.jsonl'), records: nRecords, bodies: join(dir, 'bodies.jsonl') };
    const nShort = Number(process.env.WHOLE_RUN_SHORT ?? 8);
    // row() needs 10 requests at the server: 3 records of 4 calls each is the smallest short run.
    if (!(nShort === 0 || nShort >= 3)) throw new Error(`WHOLE_RUN_SHORT must be 0 (no short runs) or at least 3, got ${process.env.WHOLE_RUN_SHORT}`);
    if (nShort > 0) writeInput(join(dir, 'short.jsonl'), nShort);
    const short: Workload = { input: join(dir, 'short.jsonl'), records: nShort, bodies: join(dir, 'bodies-short.jsonl') };
    const nodeArgs = (process.env.WHOLE_RUN_NODE_ARGS ?? '').split(' ').filter(Boolean);
    const only = process.env.WHOLE_RUN_CLIENTS?.split(',');
    const nRounds = Math.max(1, Number(process.env.WHOLE_RUN_ROUNDS ?? 3));
    const rounds: Round[] = [];
    for (let i = 0; i < nRounds; i++) {
      const cli = await runCli(dir, server, long, nodeArgs);
      const bare = !only || only.includes('bare') ? await runBare(dir, server, long, false, nodeArgs) : undefined;
      const pooled = i === 0 && (!only || only.includes('bare-pooled')) ? await runBare(dir, server, long, true, nodeArgs) : undefined;
      const shortFig = bare && nShort > 0 ? await shortRuns(dir, server, short, nodeArgs) : undefined;
      rounds.push({ cli, ...(bare ? { bare } : {}), ...(shortFig ? { short: shortFig } : {}), rows: [cli, ...(bare ? [bare] : []), ...(pooled ? [pooled] : [])] });
    }
    const caps = rounds[0]!.rows.map((r) => `${r.client}: ${r.maxInFlight} in flight, ${r.maxPerSecond} in 1 s, ${r.connections} connections`).join('; ');
    const s = summary(rounds);
    const verdict = [
      `**Medians over ${nRounds} round(s)**: fraction of the limit (whole run) **${fmt(s.fraction, 3)}** (target ≥ 0.95, ${s.fraction >= 0.95 ? 'met' : 'not met'});`,
      s.ratios.length
        ? `CPU per call ${fmt(s.cliCpu, 2)} ms (CLI) against ${fmt(s.bareCpu, 2)} ms (bare), ratio in each round ${s.ratios.map((r) => fmt(r, 2)).join(', ')}, median **${fmt(s.ratio, 2)}** (target ≤ 1.2, ${s.ratio <= 1.2 ? 'met' : 'not met'}).`
        : `CPU per call ${fmt(s.cliCpu, 2)} ms (CLI); no bare run, so no ratio.`,
    ].join(' ');
    const split = s.marginal.length
      ? `Split into a fixed and a per-call part (${SHORT_RUNS} runs of ${nShort} records per round and client, medians): a short run costs ${fmt(s.fixedCliMs / 1000, 2)} CPU-s (CLI) and ${fmt(s.fixedBareMs / 1000, 2)} (bare); beyond it, the CLI spends ${s.marginal.map((r) => fmt(r, 2)).join(', ')} times the bare client's CPU per call, median **${fmt(s.marginalRatio, 2)}**.`
      : '';
    return [
      `Whole run against a fake OpenAI-compatible endpoint in a child process (every call answered after 500 ms), ${nRecords} records (${source}) x 4 calls (3 jurors + consolidation), cache off; every client limited to ${IN_FLIGHT} calls in flight and ${LIMIT_PER_S} calls/s, so the ceiling is ${LIMIT_PER_S} calls/s. The bare clients replay the request bodies the CLI sent in the same round. CPU is user + system of the whole client process, startup included.`,
      '',
      table(rounds),
      '',
      verdict,
      ...(split ? ['', split] : []),
      '',
      `Most seen at the server in round 1: ${caps}.`,
    ].join('\n');
  } finally {
    await server.close();
    if (process.env.WHOLE_RUN_KEEP) process.stderr.write(`whole-run: kept ${dir}\n`);
    else rmSync(dir, { recursive: true, force: true });
  }
}
