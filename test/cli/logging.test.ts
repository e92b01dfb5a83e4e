// Issue 14, points 3 and 5: JSON logs that parse line by line and never carry a secret, and
// fatal errors as one line (the stack only with --debug).
import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { defaultProfile, startSimulator, withoutFaults, type RunningSimulator } from '../../src/sim/index.js';
import { runCli } from '../helpers/cli.js';
import { fastSimConfig, tempDir, writeJsonl } from '../helpers/run-setup.js';

const SENTINEL = 'sk-sentinel-logs-5d2e8b7a9c1f3e6d4b0a';

/** Refuses every call with a 401 whose body echoes the key it was sent, as some proxies do. */
function echoingServer(): Promise<{ server: Server; url: string; seen: string[] }> {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    const auth = String(req.headers.authorization ?? '');
    seen.push(auth);
    req.resume();
    req.on('end', () => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `Incorrect API key provided: ${auth.replace(/^Bearer /, '')}`, type: 'invalid_request_error' } }));
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`, seen })));
}

const records = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `log-${i}`, problem: `What is ${i}+2?`, trace: `${i}+2 = ${i + 3}.\n\nSo the answer is ${i + 3}.` }));

function jsonLines(stderr: string): Array<Record<string, unknown>> {
  const lines = stderr.split('\n').filter((l) => l !== '');
  return lines.map((l) => {
    try {
      return JSON.parse(l) as Record<string, unknown>;
    } catch {
      throw new Error(`not a JSON line: ${l}`);
    }
  });
}

/** `jq` reads the text as a stream of JSON values and fails on anything else (skipped when absent). */
function jqAccepts(text: string): boolean | null {
  try {
    execFileSync('jq', ['--version'], { stdio: 'ignore' });
  } catch {
    return null;
  }
  try {
    execFileSync('jq', ['if has("level") and has("component") and has("msg") then empty else error("an event without level, component or msg") end'], { input: text, stdio: ['pipe', 'ignore', 'ignore'] });
    return true;
  } catch {
    return false;
  }
}

describe('--log-format json', () => {
  let sim: RunningSimulator;
  let echo: Awaited<ReturnType<typeof echoingServer>>;
  beforeAll(async () => {
    sim = await startSimulator({ profile: withoutFaults(defaultProfile()) });
    echo = await echoingServer();
  });
  afterAll(async () => {
    await sim.close();
    echo.server.close();
  });

  it('every stderr line is a JSON event with level, component and msg, and the sentinel key is in none of them', async () => {
    const dir = tempDir('logs-json');
    const audit = join(dir, 'audit.jsonl');
    const config = join(dir, 'jury.yaml');
    writeFileSync(
      config,
      YAML.stringify({
        endpoints: {
          good: { base_url: sim.url, api_key_env: 'RJ_LOG_SENTINEL', max_concurrency: 4 },
          echo: { base_url: echo.url, api_key_env: 'RJ_LOG_SENTINEL', max_retries: 0 },
        },
        jurors: [
          { id: 'jury-0', endpoint: 'good', model: 'sim-juror-a' },
          { id: 'jury-1', endpoint: 'good', model: 'sim-juror-b' },
          { id: 'jury-2', endpoint: 'echo', model: 'sim-juror-c' },
        ],
        consolidator: { id: 'consolidator', endpoint: 'good', model: 'sim-consolidator' },
        // The echoing seat fails every record: each ends with no verdict, an event with its id.
        min_jurors: 3,
        audit_log: { path: audit },
        cache: { enabled: false, dir: join(dir, 'cache') },
      }),
    );
    const input = writeJsonl(join(dir, 'in.jsonl'), records(3));
    const res = await runCli(['run', '--log-format', 'json', '--debug', '--progress', 'log', '-c', config, '-i', input, '-o', join(dir, 'out')], { env: { RJ_LOG_SENTINEL: SENTINEL } });
    // A refused key stops the run (issue 35): exit 3, one fatal event, redacted.
    expect(res.code, res.stderr).toBe(3);
    // The key really went to the echoing server, and came back in its error bodies.
    expect(echo.seen).toContain(`Bearer ${SENTINEL}`);
    const events = jsonLines(res.stderr);
    for (const e of events) {
      expect(typeof e.level, JSON.stringify(e)).toBe('string');
      expect(['debug', 'info', 'warn', 'error', 'fatal']).toContain(e.level);
      expect(typeof e.component).toBe('string');
      expect(typeof e.msg).toBe('string');
      expect(typeof e.time).toBe('string');
    }
    expect(jqAccepts(res.stderr)).not.toBe(false);
    const fatal = events.filter((e) => e.level === 'fatal');
    expect(fatal).toHaveLength(1);
    expect(String(fatal[0]!.msg)).toMatch(/endpoint "echo" refused the API key \(HTTP 401\) for seat "jury-2"/);
    const auditText = readFileSync(audit, 'utf8');
    expect(auditText).toMatch(/Incorrect API key provided/);
    for (const [where, text] of Object.entries({ stdout: res.stdout, stderr: res.stderr, audit: auditText })) {
      expect(text.includes(SENTINEL), `sentinel leaked into ${where}`).toBe(false);
      expect(text.includes(SENTINEL.slice(3, 20)), `part of the sentinel leaked into ${where}`).toBe(false);
    }
  });

  it('--progress bar is refused with JSON logs, as one JSON line', async () => {
    const res = await runCli(['run', '--log-format', 'json', '--progress', 'bar']);
    expect(res.code).toBe(2);
    const events = jsonLines(res.stderr);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ level: 'fatal', component: 'cli' });
    expect(String(events[0]!.msg)).toMatch(/--progress bar .* --log-format json/);
  });

  it("commander's own errors are JSON too", async () => {
    const res = await runCli(['--log-format', 'json', 'run', '--no-such-option']);
    expect(res.code).toBe(1);
    expect(jsonLines(res.stderr)).toEqual([expect.objectContaining({ level: 'fatal', msg: expect.stringMatching(/unknown option '--no-such-option'/) })]);
  });
});

describe('fatal errors', () => {
  const dir = tempDir('logs-fatal');
  const config = fastSimConfig(dir);
  const input = writeJsonl(join(dir, 'in.jsonl'), records(2));
  // The output folder would be under a regular file: the folder check before any model call
  // fails with ENOTDIR (src/compose/output-claim.ts), a usage error (exit 2).
  const blocker = join(dir, 'a-file');
  writeFileSync(blocker, 'not a folder\n');
  const args = ['run', '-c', config, '-i', input, '-o', join(blocker, 'out'), '--progress', 'none'];
  const stack = /\n\s+at /;

  it('are one line naming the path and what to do, without a stack or "Error: Error:"', async () => {
    const res = await runCli(args);
    expect(res.code, res.stderr).toBe(2);
    const fatal = res.stderr.split('\n').filter((l) => l.includes(blocker));
    expect(fatal, res.stderr).toHaveLength(1);
    expect(fatal[0]).toMatch(/^reasoning-jury: --out .*a-file\/out is not writable: a part of the path is a file, not a folder \(ENOTDIR\); give a folder this user can write$/);
    expect(res.stderr).not.toMatch(stack);
    expect(res.stderr).not.toMatch(/Error: /);
  });

  it('as JSON: one fatal event with the path and code as fields', async () => {
    const res = await runCli(['--log-format', 'json', ...args]);
    expect(res.code).toBe(2);
    const fatal = jsonLines(res.stderr).filter((e) => e.level === 'fatal');
    expect(fatal).toHaveLength(1);
    expect(fatal[0]).toMatchObject({ component: 'cli', code: 'ENOTDIR', msg: expect.stringMatching(/file, not a folder/), path: expect.stringContaining(blocker) });
    expect(fatal[0]!.stack).toBeUndefined();
  });

  // /dev/full answers every write with ENOSPC: a real full disk, for the audit log.
  it.runIf(existsSync('/dev/full'))('a full disk is one line naming the file and saying to free space', async () => {
    const res = await runCli(['run', '-c', config, '-i', input, '-o', join(dir, 'out-full'), '--progress', 'none', '--audit-log', '/dev/full']);
    expect(res.code, res.stderr).toBe(1);
    const lines = res.stderr.split('\n').filter((l) => l.includes('ENOSPC'));
    expect(lines).toEqual(['reasoning-jury: audit log /dev/full: ENOSPC: no space left on device, write; free space on that device, then run the same command again (committed ranges are skipped)']);
    expect(res.stderr).not.toMatch(stack);
  });

  it('a judging thread out of memory is one line saying to raise --max-heap-mb', async () => {
    // 8 MB of heap cannot even load the jury: the worker dies with ERR_WORKER_OUT_OF_MEMORY.
    const res = await runCli(['run', '-c', config, '-i', input, '-o', join(dir, 'out-oom'), '--progress', 'none', '--max-heap-mb', '8']);
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^reasoning-jury: .*memory limit.*; raise --max-heap-mb, then run the same command again/)]);
  });

  it('--debug adds the stack', async () => {
    const res = await runCli([...args, '--debug']);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(stack);
    expect(res.stderr).not.toMatch(/Error: Error:/);
  });
});
