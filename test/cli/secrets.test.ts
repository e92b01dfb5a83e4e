import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { Verdict } from '../../schemas/verdict.js';
import { defaultProfile, startSimulator, type RunningSimulator } from '../../src/sim/index.js';
import { runCli } from '../helpers/cli.js';

const SENTINEL = 'sk-sentinel-7f3c9a1e5b2d4c6e8a0f1b3d5e7c9a2b';

/** An upstream that refuses the key and echoes it back, as some proxies do in 401 bodies. */
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

describe('secrets never leave the environment', () => {
  let sim: RunningSimulator;
  let echo: Awaited<ReturnType<typeof echoingServer>>;
  beforeAll(async () => {
    sim = await startSimulator({ profile: defaultProfile() });
    echo = await echoingServer();
  });
  afterAll(async () => {
    await sim.close();
    echo.server.close();
  });

  it('a sentinel API key is used on the wire but appears in no log, output, error or verdict', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rj-secret-'));
    const audit = join(dir, 'audit.jsonl');
    const config = join(dir, 'jury.yaml');
    writeFileSync(
      config,
      YAML.stringify({
        endpoints: {
          good: { base_url: sim.url, api_key_env: 'RJ_SENTINEL_KEY', max_concurrency: 4 },
          echo: { base_url: echo.url, api_key_env: 'RJ_SENTINEL_KEY', max_retries: 0 },
        },
        jurors: [
          { id: 'jury-0', endpoint: 'good', model: 'sim-juror-a' },
          { id: 'jury-1', endpoint: 'good', model: 'sim-juror-b' },
          { id: 'jury-2', endpoint: 'echo', model: 'sim-juror-c' },
        ],
        consolidator: { id: 'consolidator', endpoint: 'echo', model: 'sim-consolidator' },
        min_jurors: 2,
        audit_log: { path: audit },
        cache: { enabled: true, dir: join(dir, 'cache') },
      }),
    );
    const record = { id: 'r1', problem: 'What is 3*4?', trace: '3*4 = 13.\n\nSo the answer is 13.', gold: { error_steps: [1, 2] } };
    const res = await runCli(['judge', '--config', config], { stdin: JSON.stringify(record), env: { RJ_SENTINEL_KEY: SENTINEL, LOG_LEVEL: 'debug' } });
    // A refused key is the endpoint's fault: the command stops with one line (issue 35), redacted.
    expect(res.code, res.stderr).toBe(3);
    expect(res.stderr).toMatch(/endpoint "echo" refused the API key \(HTTP 401\)/);
    // The key really was sent to both servers.
    expect(sim.stats().authorization.present).toBeGreaterThan(0);
    expect(echo.seen.some((a) => a === `Bearer ${SENTINEL}`)).toBe(true);
    const auditText = readFileSync(audit, 'utf8');
    expect(auditText).toMatch(/Incorrect API key provided/);
    const cacheFiles = readFileSync(join(dir, 'jury.yaml'), 'utf8');
    for (const [where, text] of Object.entries({ stdout: res.stdout, stderr: res.stderr, audit: auditText, config: cacheFiles })) {
      expect(text.includes(SENTINEL), `sentinel leaked into ${where}`).toBe(false);
      expect(text.includes(SENTINEL.slice(3, 20)), `part of the sentinel leaked into ${where}`).toBe(false);
    }
  });
});
