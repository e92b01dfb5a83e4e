import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { treeProbe, watchdog, type Probe, type StallOptions } from './progress.js';

/** The bin package.json names: the bundled CLI (scripts/bundle.mjs). */
export const BIN = join(process.cwd(), 'dist/cli/main.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** set when the run was killed for making no progress (the reason is also at the end of stderr) */
  stalled?: string;
}

export interface CliOptions extends StallOptions {
  stdin?: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** the CLI script node runs (default: this checkout's build, BIN) */
  bin?: string;
  /**
   * What else shows the command working, besides its own output (which always counts): e.g.
   * `treeProbe(out)` for a `run --progress none`, committed manifests, a checkpoint file.
   */
  progress?: Probe;
  /** optional hard cap in ms; normally unset, so only a stall ends the command early */
  timeoutMs?: number;
}

/**
 * Kills `child` with SIGKILL when neither its output nor `progress` moved for the stall window.
 * Returns the watchdog and a function giving the stall reason (undefined while none).
 */
export function guardChild(child: ChildProcess, opts: CliOptions & { what: string }): { stop(): void; stalled(): string | undefined } {
  let reason: string | undefined;
  const dog = watchdog(opts.progress ?? (() => 0), (r) => {
    reason = r;
    child.kill('SIGKILL');
  }, { ...opts, what: opts.what });
  child.stdout?.on('data', () => dog.touch());
  child.stderr?.on('data', () => dog.touch());
  const cap = opts.timeoutMs === undefined ? undefined : setTimeout(() => ((reason = `${opts.what}: over the hard cap of ${opts.timeoutMs} ms`), child.kill('SIGKILL')), opts.timeoutMs);
  return {
    stop: () => (dog.stop(), clearTimeout(cap)),
    stalled: () => reason,
  };
}

/**
 * Run the built CLI with stdin and extra env; never throws on a non-zero exit. It is killed only
 * when it stops making progress (see test/helpers/progress.ts), not after a fixed time.
 */
export function runCli(args: string[], opts: CliOptions = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [opts.bin ?? BIN, ...args], { cwd: opts.cwd ?? process.cwd(), env: { ...process.env, ...opts.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const guard = guardChild(child, { ...opts, what: `reasoning-jury ${args.slice(0, 2).join(' ')}` });
    child.on('error', (e) => (guard.stop(), reject(e)));
    child.on('close', (code) => {
      guard.stop();
      const stalled = guard.stalled();
      resolve({ code, stdout, stderr: stalled ? `${stderr}\n[test] killed: ${stalled}` : stderr, ...(stalled ? { stalled } : {}) });
    });
    child.stdin.end(opts.stdin ?? '');
  });
}

/**
 * Start `run` and SIGKILL it once `ready()` holds plus `delayMs`: kill points are chosen by
 * progress (committed ranges), not wall time, so they land mid-run on a fast or a busy machine.
 * A run whose output folder stops changing before that is killed as stalled and fails the test.
 */
export function runAndKill(args: string[], out: string, ready: () => Promise<boolean>, delayMs: number): Promise<{ killed: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: 'ignore' });
    const guard = guardChild(child, { progress: treeProbe(out), what: 'run (to be killed)' });
    let exited = false;
    child.on('exit', (_code, signal) => {
      exited = true;
      guard.stop();
      const stalled = guard.stalled();
      if (stalled) reject(new Error(stalled));
      else resolve({ killed: signal === 'SIGKILL' });
    });
    const poll = async () => {
      if (exited) return;
      if (await ready()) setTimeout(() => !exited && child.kill('SIGKILL'), delayMs);
      else setTimeout(poll, 25);
    };
    void poll();
  });
}
