/**
 * The `command` batch dialect: a batch is a local input JSONL answered by a command run on this
 * machine (`vllm run-batch -i {input} -o {output} --model {model}`), which writes one output line
 * per request in the format lines.ts reads. Upload writes the input file, create starts the
 * command, retrieve says whether it is still running, download reads the output file.
 *
 *   <work_dir>/<id>.input.jsonl    written before the journal's `uploaded` entry
 *   <work_dir>/<id>.output.jsonl   the command's output
 *   <work_dir>/<id>.pid            the running command's pid (removed when it ends)
 *
 * A batch of the journal that this process did not start (a re-run after a stop) is over when
 * its output file answers every custom_id of its input; while the command a killed run left
 * behind still runs it is waited for; otherwise it is run again. Without its input file (another
 * machine, a cleaned temp folder) the batch is gone and its requests are submitted again.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { EndpointConfig } from '../../../../schemas/config.js';
import { logger } from '../../../util/log.js';
import type { Redactor } from '../../../util/redact.js';
import { commandArgv, shellQuote } from './command-line.js';
import type { BatchPaths } from './journal.js';
import { BatchGoneError, type BatchDialect, type BatchInfo } from './openai-dialect.js';

const log = logger('llm');
const STDERR_TAIL = 600;

interface Run {
  child: ChildProcess;
  stderr: string;
  /** set once it ended: its exit code, or why it could not start */
  ended?: { code: number | null; signal: NodeJS.Signals | null; spawnError?: string };
}

/** The default work folder of an endpoint's command batches. */
export function defaultWorkDir(endpoint: string): string {
  return join(tmpdir(), 'reasoning-jury-batches', endpoint.replace(/[^A-Za-z0-9_-]/g, '_'));
}

export function commandDialect(name: string, endpoint: EndpointConfig, redactor: Redactor, env: NodeJS.ProcessEnv = process.env): BatchDialect {
  const command = endpoint.batch?.command;
  if (!command) throw new Error(`endpoint "${name}": batch.command is required when batch.dialect is "command"`);
  const dir = resolve(endpoint.batch?.work_dir ?? defaultWorkDir(name));
  const runs = new Map<string, Run>();
  const paths = (id: string): BatchPaths & { pid: string } => ({ input: join(dir, `${id}.input.jsonl`), output: join(dir, `${id}.output.jsonl`), pid: join(dir, `${id}.pid`) });
  const start = (id: string, signal: AbortSignal): BatchInfo => {
    const p = paths(id);
    const argv = commandArgv(command, { input: p.input, output: p.output, model: modelOf(p.input) });
    rmSync(p.output, { force: true });
    runs.set(id, launch(argv, env, p.pid, signal));
    log.info(`endpoint "${name}": batch ${id}: running ${redactor.text(argv.map((w) => (/[\s'"\\]/.test(w) ? shellQuote(w) : w)).join(' '))}`, { endpoint: name, batch: id });
    return { id, state: 'in_progress', input_file_id: id, paths: { input: p.input, output: p.output } };
  };
  const outcome = (id: string, run: Run): BatchInfo => {
    const p = paths(id);
    const base = { id, input_file_id: id, paths: { input: p.input, output: p.output } };
    const e = run.ended!;
    if (e.code === 0 && existsSync(p.output)) return { ...base, state: 'completed', output_file_id: id };
    const how = e.spawnError ? `could not start (${e.spawnError})` : e.code === 0 ? `exited with code 0 but wrote no ${p.output}` : e.signal ? `was stopped by ${e.signal}` : `exited with code ${e.code}`;
    const tail = run.stderr.replace(/\s+/g, ' ').trim().slice(-STDERR_TAIL);
    const errors = redactor.text(`batch command "${command}" ${how}${tail ? `; stderr ends: ${tail}` : ''}`);
    log.warn(`endpoint "${name}": batch ${id}: ${errors}`, { endpoint: name, batch: id });
    return { ...base, state: 'failed', errors };
  };
  const retrieve = async (id: string, signal: AbortSignal): Promise<BatchInfo> => {
    const run = runs.get(id);
    if (run) return run.ended ? outcome(id, run) : { id, state: 'in_progress', input_file_id: id };
    const p = paths(id);
    if (!existsSync(p.input)) throw new BatchGoneError(`batch ${id}: its input file ${p.input} is gone`, true, 404);
    if (leftRunning(p.pid, p.input)) return { id, state: 'in_progress', input_file_id: id };
    if (answersAll(p.input, p.output)) return { id, state: 'completed', input_file_id: id, output_file_id: id, paths: { input: p.input, output: p.output } };
    log.info(`endpoint "${name}": batch ${id}: its output is not complete; running its command again`, { endpoint: name, batch: id });
    return start(id, signal);
  };
  return {
    name: 'command',
    upload: async (jsonl) => {
      mkdirSync(dir, { recursive: true });
      const id = `cmd-${Date.now().toString(36)}-${createHash('sha256').update(jsonl).digest('hex').slice(0, 12)}`;
      writeFileSync(paths(id).input, jsonl);
      return id;
    },
    create: async (id, signal) => start(id, signal),
    retrieve,
    findByInputFile: async (id, signal) => (existsSync(paths(id).input) ? retrieve(id, signal) : undefined),
    download: async (id) => readFileSync(paths(id).output, 'utf8'),
    cancel: async (id) => {
      const run = runs.get(id);
      if (run && !run.ended) stop(run.child);
      return { id, state: 'cancelled', input_file_id: id };
    },
  };
}

/** Starts the command; the provider closing (end of run, Ctrl-C) stops it, and its next run starts it again. */
function launch(argv: string[], env: NodeJS.ProcessEnv, pidFile: string, signal: AbortSignal): Run {
  const child = spawn(argv[0]!, argv.slice(1), { env, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  const run: Run = { child, stderr: '' };
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (d: string) => {
    run.stderr = (run.stderr + d).slice(-4 * STDERR_TAIL);
  });
  if (child.pid !== undefined) writeFileSync(pidFile, String(child.pid));
  const onAbort = () => stop(child);
  signal.addEventListener('abort', onAbort, { once: true });
  const end = (ended: Run['ended']) => {
    run.ended ??= ended;
    signal.removeEventListener('abort', onAbort);
    rmSync(pidFile, { force: true });
  };
  child.on('error', (err) => end({ code: null, signal: null, spawnError: err.message }));
  child.on('close', (code, sig) => end({ code, signal: sig }));
  return run;
}

/** SIGTERM to the command's process group (a shell's children too). */
function stop(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    child.kill('SIGTERM');
  }
}

/** Whether the command a stopped run started for this input still runs (its pid alive, and on Linux still about this input). */
function leftRunning(pidFile: string, input: string): boolean {
  if (!existsSync(pidFile)) return false;
  const pid = Number(readFileSync(pidFile, 'utf8'));
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(input);
  } catch {
    return true;
  }
}

/** The model of a batch: every line of one batch names the same one. */
function modelOf(input: string): string {
  const first = readFileSync(input, 'utf8').split('\n', 1)[0]!;
  const model = (JSON.parse(first) as { body?: { model?: unknown } }).body?.model;
  if (typeof model !== 'string') throw new Error(`${input}: the first request names no model`);
  return model;
}

/** Whether the output file has a line for every custom_id of the input (answered or failed). */
function answersAll(input: string, output: string): boolean {
  if (!existsSync(output)) return false;
  const ids = (text: string) => new Set(text.split('\n').flatMap((l) => (l.trim() ? [(JSON.parse(l) as { custom_id?: unknown }).custom_id] : [])));
  try {
    const answered = ids(readFileSync(output, 'utf8'));
    return [...ids(readFileSync(input, 'utf8'))].every((id) => answered.has(id));
  } catch {
    return false; // a torn output line
  }
}
