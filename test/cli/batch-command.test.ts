/**
 * `run --batch` with the `command` dialect: each batch is a local input file answered by
 * scripts/sim-run-batch.mjs (which plays `vllm run-batch` with the simulator, in-process, graded
 * against the same labels and profile as the `reasoning-jury simulate` process of the online run).
 *
 * - ProcessBench records with consolidation: rows equal to an online run's, call metadata aside,
 *   and no online chat call.
 * - A command exiting 1: retried as the endpoint's retries say, then failed juror calls (no
 *   verdict, never an unjudged commit); the log names the command, its exit code and its
 *   stderr's tail, secrets of the env redacted.
 * - SIGKILL of the run while a command runs, then the same command: the command left running is
 *   waited for and its output used, so no batch is run twice.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { benchRecords } from '../../bench/common.js';
import { batchConfig, journalEntries, rows, simProfileFile, startSim, tableOf, TABLES } from '../helpers/batch-run.js';
import { runAndKill, runCli } from '../helpers/cli.js';
import { LONG_TEST_MS, treeProbe } from '../helpers/progress.js';
import { tempDir, writeJsonl } from '../helpers/run-setup.js';

const N = Number(process.env.RJ_BATCH_COMMAND_RECORDS ?? 300);
const SCRIPT = join(process.cwd(), 'scripts/sim-run-batch.mjs');
const dir = tempDir('batch-command');
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const input = writeJsonl(join(dir, 'processbench.jsonl'), benchRecords(N).records);
/** The in-process simulator of sim-run-batch, answering as the `simulate` process of `startSim(…, name, input, {})` does. */
const simCommand = (name: string, gold: string) => `node ${SCRIPT} -i {input} -o {output} --model {model} --profile ${simProfileFile(dir, `${name}-cmd`)} --gold ${gold}`;
describe('run --batch with the command dialect', () => {
  it(`judges ${N} ProcessBench records through sim-run-batch, rows equal to an online run`, async () => {
    const sim = await startSim(dir, children, 'equal', input, {});
    const cfg = batchConfig(dir, 'equal', sim.url, {}, { dialect: 'command', command: simCommand('equal', input), work_dir: join(dir, 'work') });
    const online = join(dir, 'online');
    const a = await runCli(['run', '-c', cfg, '-i', input, '-o', online, '--progress', 'none', '--concurrency', '16'], { progress: treeProbe(online) });
    expect(a.code, a.stderr).toBe(0);
    const before = await sim.stats();
    const batched = join(dir, 'batched');
    const b = await runCli(['run', '-c', cfg, '-i', input, '-o', batched, '--progress', 'none', '--batch'], { progress: treeProbe(batched) });
    expect(b.code, b.stderr).toBe(0);
    expect((await sim.stats()).online.chat_calls).toBe(before.online.chat_calls);
    expect(b.stdout).toMatch(new RegExp(`judged\\s+${N}\\b`));
    expect(b.stdout).toMatch(/batches submitted \/ completed \/ failed or expired\s+\d+ \/ \d+ \/ 0/);
    const entries = journalEntries(batched);
    expect(entries.length).toBeGreaterThanOrEqual(2); // Phase 1, then consolidation
    for (const e of entries) {
      expect(e).toMatchObject({ dialect: 'command', state: 'completed' });
      expect(existsSync(e.paths!.output)).toBe(true);
    }
    for (const table of TABLES) expect(await tableOf(batched, table), table).toEqual(await tableOf(online, table));
  }, LONG_TEST_MS);

  it('a command exiting 1: retried, then failed juror calls and no unjudged commit; the log names it, secrets redacted', async () => {
    const small = writeJsonl(join(dir, 'fail.jsonl'), benchRecords(6).records);
    const fail = join(dir, 'fail.mjs');
    writeFileSync(fail, "process.stderr.write(`loading weights\\nCUDA error: out of memory (token ${process.env.RJ_TEST_HF_TOKEN})\\n`);\nprocess.exit(1);\n");
    const cfg = batchConfig(dir, 'fail', 'http://127.0.0.1:9/v1', {}, { dialect: 'command', command: `node ${fail} {input} {output}`, work_dir: join(dir, 'work-fail') });
    const cfgText = readFileSync(cfg, 'utf8').replace('max_concurrency: 64', 'max_concurrency: 64\n    max_retries: 1\n    backoff_base_ms: 10\n    backoff_max_ms: 20');
    writeFileSync(cfg, cfgText);
    const out = join(dir, 'failed');
    const res = await runCli(['run', '-c', cfg, '-i', small, '-o', out, '--progress', 'none', '--batch'], { progress: treeProbe(out), env: { RJ_TEST_HF_TOKEN: 'hf_secretvalue123' } });
    expect(res.stderr).toMatch(/batch command "node \S+fail\.mjs \{input\} \{output\}" exited with code 1; stderr ends: loading weights CUDA error: out of memory \(token \[REDACTED\]\)/);
    expect(res.stderr + res.stdout).not.toContain('hf_secretvalue123');
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/no verdict \(too few jurors\)\s+6\b/);
    const verdicts = await rows(out, 'verdicts');
    expect(verdicts).toHaveLength(6);
    for (const v of verdicts) expect(v).toMatchObject({ jurors_ok: 0, error: expect.stringMatching(/\S/) });
    // the first batch and its retry, each a failed command
    expect(journalEntries(out).filter((e) => e.state === 'failed').length).toBeGreaterThanOrEqual(2);
  }, LONG_TEST_MS);

  it('SIGKILL while the command runs, then the same command: the command left running is waited for, no batch runs twice', async () => {
    const small = writeJsonl(join(dir, 'kill.jsonl'), benchRecords(30).records);
    const count = join(dir, 'runs.log');
    // `;` needs a shell: this command runs under /bin/sh -c, its placeholders quoted
    const command = `echo {input} >> ${count}; sleep 2; ${simCommand('kill', small)}`;
    const cfg = batchConfig(dir, 'kill', 'http://127.0.0.1:9/v1', {}, { dialect: 'command', command, work_dir: join(dir, 'work-kill') });
    const out = join(dir, 'killed');
    const args = ['run', '-c', cfg, '-i', small, '-o', out, '--progress', 'none', '--batch'];
    const running = async () => journalEntries(out).some((e) => e.batch_id !== undefined && e.state === 'in_progress');
    const { killed } = await runAndKill(args, out, running, 200);
    expect(killed).toBe(true);
    const res = await runCli(args, { progress: treeProbe(out) });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toMatch(/re-attaching to batch cmd-/);
    expect(res.stderr).not.toMatch(/running its command again/);
    expect(res.stdout).toMatch(/judged\s+30\b/);
    expect(res.stdout).toMatch(/no verdict \(too few jurors\)\s+0\b/);
    const started = readFileSync(count, 'utf8').trim().split('\n');
    expect(new Set(started).size).toBe(started.length);
    expect(started.length).toBe(journalEntries(out).length);
    for (const table of ['verdicts', 'decisions'] as const) expect((await rows(out, table)).length, table).toBe(30);
  }, LONG_TEST_MS);

  it('SIGKILL of the run and of its command, then the same command: the unfinished batch is run again from its input file', async () => {
    const small = writeJsonl(join(dir, 'rerun.jsonl'), benchRecords(20).records);
    const count = join(dir, 'reruns.log');
    const work = join(dir, 'work-rerun');
    const command = `echo {input} >> ${count}; sleep 2; ${simCommand('rerun', small)}`;
    const cfg = batchConfig(dir, 'rerun', 'http://127.0.0.1:9/v1', {}, { dialect: 'command', command, work_dir: work });
    const out = join(dir, 'rerun');
    const args = ['run', '-c', cfg, '-i', small, '-o', out, '--progress', 'none', '--batch'];
    const running = async () => journalEntries(out).some((e) => e.batch_id !== undefined && e.state === 'in_progress');
    expect((await runAndKill(args, out, running, 200)).killed).toBe(true);
    // one batch per juror model runs at once: each command left running is killed
    const pids = readdirSync(work).filter((n) => n.endsWith('.pid'));
    expect(pids.length).toBeGreaterThan(0);
    for (const f of pids) process.kill(-Number(readFileSync(join(work, f), 'utf8')), 'SIGKILL');
    const res = await runCli(args, { progress: treeProbe(out) });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toMatch(/its output is not complete; running its command again/);
    expect(res.stdout).toMatch(/no verdict \(too few jurors\)\s+0\b/);
    const started = readFileSync(count, 'utf8').trim().split('\n');
    // each batch killed mid-command ran twice, on the same input file; no other batch did
    expect(started.length).toBe(new Set(started).size + pids.length);
    expect(started.length).toBe(journalEntries(out).length + pids.length);
    expect((await rows(out, 'verdicts')).length).toBe(20);
  }, LONG_TEST_MS);
});
