/**
 * `reasoning-jury batch list|cancel OUT` against `reasoning-jury simulate`: a `run --batch`
 * killed while its batches are in progress (the simulator holds them for ten minutes), its
 * journal listed, its live batches cancelled through the endpoint the config names (a config
 * without that endpoint refused, nothing cancelled), then the same run on a quick simulator on
 * the same port: the cancelled batches' requests are submitted again and every record judged.
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { benchRecords } from '../../bench/common.js';
import { batchConfig, journalEntries, rows, startSim } from '../helpers/batch-run.js';
import { runAndKill, runCli } from '../helpers/cli.js';
import type { BatchRow } from '../../src/cli/batch.js';
import { LONG_TEST_MS, treeProbe } from '../helpers/progress.js';
import { tempDir, writeJsonl } from '../helpers/run-setup.js';

const dir = tempDir('batch-cli');
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** What `batch list --json` prints: the command's own row type. */
type Listed = BatchRow;

const listJson = async (out: string): Promise<Listed[]> => {
  const res = await runCli(['batch', 'list', out, '--json']);
  expect(res.code, res.stderr).toBe(0);
  return JSON.parse(res.stdout) as Listed[];
};

describe('batch list|cancel', () => {
  it('lists a killed run\'s live batches, cancels them through the config\'s endpoint, and the next run submits their requests again', async () => {
    const input = writeJsonl(join(dir, 'records.jsonl'), benchRecords(12).records);
    const slow = await startSim(dir, children, 'slow', input, { completion_delay_ms: 600_000 });
    const cfg = batchConfig(dir, 'run', slow.url);
    const out = join(dir, 'out');
    const args = ['run', '-c', cfg, '-i', input, '-o', out, '--progress', 'none', '--batch'];
    // the Phase 1 batches (one per juror model, unless a model's requests were cut in two) all created
    const submitted = async () => {
      const entries = journalEntries(out);
      return entries.length >= 3 && entries.every((e) => e.batch_id !== undefined);
    };
    expect((await runAndKill(args, out, submitted, 100)).killed).toBe(true);

    const table = await runCli(['batch', 'list', out]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(/^endpoint\s+model\s+dialect\s+batch id\s+state\s+requests\s+created\s+finished$/);
    expect(table.stdout).toMatch(/sim\s+sim-juror-a\s+openai\s+batch_\S+\s+(validating|in_progress)\s+\d+\s+20\d\d-/);
    const live = await listJson(out);
    expect(live.length).toBeGreaterThanOrEqual(3);
    for (const model of ['sim-juror-a', 'sim-juror-b', 'sim-juror-c']) expect(live.filter((b) => b.model === model).reduce((n, b) => n + b.requests, 0), model).toBe(12);
    for (const b of live) expect(b).toMatchObject({ endpoint: 'sim', dialect: 'openai', finished: '' });

    // an endpoint the config lacks: refused, nothing cancelled
    const other = batchConfig(dir, 'other', slow.url);
    writeFileSync(other, readFileSync(other, 'utf8').replace(/^ {2}sim:/m, '  elsewhere:').replace(/endpoint: sim/g, 'endpoint: elsewhere'));
    const refused = await runCli(['batch', 'cancel', out, '-c', other]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/endpoint "sim" of the journal's live batches is not in the config/);
    expect((await slow.stats()).accepted.map((b) => b.status)).not.toContain('cancelled');

    // one by id, then the rest
    const first = live[0]!.batch_id;
    const one = await runCli(['batch', 'cancel', out, '-c', cfg, '--batch', first]);
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).toMatch(new RegExp(`^sim  ${first}  ${live[0]!.requests} requests  cancelled \\(server: (cancelling|cancelled)\\)\\n$`));
    const rest = await runCli(['batch', 'cancel', out, '-c', cfg]);
    expect(rest.code, rest.stderr).toBe(0);
    expect(rest.stdout.trim().split('\n')).toHaveLength(live.length - 1);
    expect(rest.stderr).toMatch(new RegExp(`${live.length - 1} of ${live.length - 1} batches cancelled`));
    const again = await runCli(['batch', 'cancel', out, '-c', cfg]);
    expect(again.stderr).toMatch(/nothing to cancel/);
    const cancelled = await listJson(out);
    for (const b of cancelled) expect(b.state).toBe('cancelled');
    for (const b of cancelled) expect(b.finished).toMatch(/^20\d\d-/);
    const atServer = (await slow.stats()).accepted;
    for (const id of live.map((b) => b.batch_id)) expect(['cancelling', 'cancelled']).toContain(atServer.find((b) => b.id === id)?.status);

    // the same run on a quick simulator at the same address: every cancelled request goes out again
    const requests = atServer.flatMap((b) => b.custom_ids);
    for (const c of children.splice(0)) c.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 200));
    const quick = await startSim(dir, children, 'quick', input, { completion_delay_ms: 50 }, slow.port);
    const res = await runCli(args, { progress: treeProbe(out) });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).not.toMatch(/re-attaching/);
    expect(res.stdout).toMatch(/judged\s+12\b/);
    expect(res.stdout).toMatch(/no verdict \(too few jurors\)\s+0\b/);
    const resent = new Set((await quick.stats()).accepted.flatMap((b) => b.custom_ids));
    for (const id of requests) expect(resent.has(id), id).toBe(true);
    expect((await rows(out, 'verdicts')).length).toBe(12);
  }, LONG_TEST_MS);

  it('refuses an output without a journal entry to cancel by id, and needs -c to cancel', async () => {
    const empty = join(dir, 'empty');
    const list = await runCli(['batch', 'list', empty]);
    expect(list.code).toBe(0);
    expect(list.stderr).toMatch(/no batches in the journal/);
    const cfg = batchConfig(dir, 'plain', 'http://127.0.0.1:9/v1');
    const byId = await runCli(['batch', 'cancel', empty, '-c', cfg, '--batch', 'batch_nope']);
    expect(byId.code).toBe(2);
    expect(byId.stderr).toMatch(/--batch batch_nope: no such batch in the journal/);
    const noConfig = await runCli(['batch', 'cancel', empty]);
    expect(noConfig.code).not.toBe(0);
    expect(noConfig.stderr).toMatch(/--config/);
  });
});
