import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { Verdict } from '../../schemas/verdict.js';
import { defaultConfigInput } from '../../src/config/load.js';
import { runCli } from '../helpers/cli.js';
import { spawn } from 'node:child_process';
import { BIN } from '../helpers/cli.js';

const record = { id: 'r1', problem: 'What is 2+3?', trace: '2+3 = 6.\n\nSo the answer is 6.', final_solution: '6', gold: { error_steps: [1, 2] } };

describe('reasoning-jury CLI', () => {
  it('--help on every command', async () => {
    const top = await runCli(['--help']);
    expect(top.code).toBe(0);
    const help: Record<string, string> = {};
    for (const cmd of ['judge', 'segment', 'simulate']) {
      expect(top.stdout).toContain(cmd);
      const h = await runCli([cmd, '--help']);
      expect(h.code, cmd).toBe(0);
      expect(h.stdout).toMatch(/Usage: reasoning-jury/);
      help[cmd] = h.stdout;
    }
    // The same `judge --help` output as above: no second process for it.
    expect(help.judge).toContain('--config');
  });

  it('judge with no config uses the in-process simulated jury and says so', async () => {
    const res = await runCli(['judge'], { stdin: JSON.stringify(record) });
    expect(res.code).toBe(0);
    expect(res.stderr).toMatch(/no --config given, using the embedded default jury: 3 simulated jurors \+ consolidation, served in-process at http:\/\/127\.0\.0\.1:\d+\/v1/);
    const v = Verdict.parse(JSON.parse(res.stdout));
    expect(v.mode).toBe('consolidation');
    expect(v.jurors_total).toBe(3);
  });

  it('clear errors with exit code 2 for bad input and bad config', async () => {
    const notJson = await runCli(['judge'], { stdin: '{"id": ' });
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toMatch(/^reasoning-jury: a trace record on stdin is not valid JSON/);
    const invalid = await runCli(['judge'], { stdin: JSON.stringify({ id: 'x', problem: 3, trace: '' }) });
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toMatch(/invalid record: .*problem/);
    const dir = mkdtempSync(join(tmpdir(), 'rj-cli-'));
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'endpoints: {}\njurors: [{ id: a, endpoint: nowhere, model: m }]\nmode: single\n');
    const cfg = await runCli(['judge', '--config', bad], { stdin: JSON.stringify(record) });
    expect(cfg.code).toBe(2);
    expect(cfg.stderr).toMatch(/jurors\.0\.endpoint: unknown endpoint "nowhere"/);
    expect(cfg.stderr).not.toMatch(/\n\s+at /); // no stack trace for user errors
  });

  it('judge twice with the cache: identical bytes, even though the embedded simulator moves port', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rj-cli-cache-'));
    const config = join(dir, 'jury.yaml');
    writeFileSync(config, YAML.stringify({ ...defaultConfigInput(), cache: { enabled: true, dir: join(dir, 'cache') }, audit_log: { path: join(dir, 'audit.jsonl') } }));
    const a = await runCli(['judge', '--config', config], { stdin: JSON.stringify(record) });
    const b = await runCli(['judge', '--config', config], { stdin: JSON.stringify(record) });
    expect(a.code).toBe(0);
    expect(b.stdout).toBe(a.stdout);
  });

  it('segment prints numbered steps', async () => {
    const res = await runCli(['segment'], { stdin: JSON.stringify({ id: 'x', problem: 'p', trace: 'A.\n\nB.\n\nC?' }) });
    expect(res.stdout.trim().split('\n').map((l) => JSON.parse(l))).toEqual([
      { step: 1, text: 'A.' },
      { step: 2, text: 'B.' },
      { step: 3, text: 'C?' },
    ]);
    const marked = await runCli(['segment', '--text', '--format', 'marked'], { stdin: 'x = 1.\n\ny = 2.' });
    expect(marked.stdout).toBe('[STEP-1] x = 1.\n\n[STEP-2] y = 2.\n');
  });

  it('simulate serves /v1/models and stops on SIGTERM', async () => {
    const child = spawn(process.execPath, [BIN, 'simulate', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (d) => {
        const m = /listening on (\S+)/.exec(String(d));
        if (m) resolve(m[1]!);
      });
      child.on('exit', () => reject(new Error('simulator exited early')));
    });
    const models = (await (await fetch(`${url}/models`)).json()) as { data: Array<{ id: string }> };
    expect(models.data.map((m) => m.id)).toContain('sim-juror-a');
    const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exit).toBe(0);
  });
});
