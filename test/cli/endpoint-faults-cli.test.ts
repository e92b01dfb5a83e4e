/**
 * Endpoint faults a new user meets first (issue 35), end to end through the CLI bin and the real
 * `openai` client: a gate server in front of the juror simulator refuses the key, does not serve
 * a model, or answers 500 to every chat call while GET /models answers 200. In each case the run
 * stops with exit 3 and one line naming the endpoint, nothing of the fault is committed, and the
 * same command after the fix judges every record.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalObjectStore } from '../../src/pipeline/storage/object-store.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { defaultProfile, startSimulator, withoutFaults, type RunningSimulator } from '../../src/sim/index.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { runCli } from '../helpers/cli.js';
import { treeProbe } from '../helpers/progress.js';
import { tempDir, writeJsonl } from '../helpers/run-setup.js';

interface Gate {
  key: string;
  /** models the gate serves (others: 404) */
  served: Set<string>;
  /** chat calls answer 500 while GET /models still answers 200 */
  deadEngine: boolean;
  /** a request whose body contains this text has its connection reset */
  resetOn?: string | undefined;
  /** a request of this model whose body contains `text` gets a reply of `bytes` bytes of `{` */
  huge?: { model: string; text: string; bytes: number } | undefined;
  chats: number;
  /** the server is still starting: this many more requests of any kind have their connection reset */
  startingFor: number;
}

let sim: RunningSimulator;
let server: Server;
let url: string;
const gate: Gate = { key: 'good-key', served: new Set(), deadEngine: false, chats: 0, startingFor: 0 };

function healthy(): void {
  gate.served = new Set(MODELS);
  gate.deadEngine = false;
  gate.resetOn = undefined;
  gate.huge = undefined;
}

function send(res: import('node:http').ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

beforeAll(async () => {
  sim = await startSimulator({ profile: withoutFaults(defaultProfile()) });
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        if (gate.startingFor > 0) {
          gate.startingFor--;
          return void res.socket?.destroy();
        }
        if (req.headers.authorization !== `Bearer ${gate.key}`) return send(res, 401, { error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } });
        if (req.method === 'GET') return send(res, 200, { object: 'list', data: [...gate.served].map((id) => ({ id, object: 'model' })) });
        gate.chats++;
        const body = Buffer.concat(chunks).toString('utf8');
        const model = String((JSON.parse(body) as { model?: unknown }).model);
        if (!gate.served.has(model)) return send(res, 404, { object: 'error', message: `The model \`${model}\` does not exist.`, type: 'NotFoundError', code: 404 });
        if (gate.deadEngine) return send(res, 500, { object: 'error', message: 'engine dead', type: 'InternalServerError' });
        if (gate.resetOn !== undefined && body.includes(gate.resetOn)) return void res.socket?.destroy();
        if (gate.huge && model === gate.huge.model && body.includes(gate.huge.text)) return send(res, 200, { id: 'x', object: 'chat.completion', created: 0, model, choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: '{'.repeat(gate.huge.bytes) } }] });
        const upstream = await fetch(`${sim.url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        res.writeHead(upstream.status, { 'content-type': 'application/json' }).end(await upstream.text());
      })();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;
});

afterAll(async () => {
  server.closeAllConnections();
  server.close();
  await sim.close();
});

const MODELS = ['sim-juror-a', 'sim-juror-b', 'sim-juror-c', 'sim-consolidator'];

function setup(name: string, juror3 = 'sim-juror-c', endpoint: Record<string, unknown> = {}) {
  const dir = tempDir(`faults-${name}`);
  const config = join(dir, 'jury.yaml');
  writeFileSync(
    config,
    YAML.stringify({
      endpoints: { gate: { base_url: url, api_key_env: 'RJ_FAULT_KEY', max_retries: 6, backoff_base_ms: 10, backoff_max_ms: 50, breaker: { failures: 3, probe_interval_ms: 50, probe_max_interval_ms: 200 }, ...endpoint } },
      jurors: ['sim-juror-a', 'sim-juror-b', juror3].map((model, i) => ({ id: `jury-${i}`, endpoint: 'gate', model })),
      consolidator: { id: 'consolidator', endpoint: 'gate', model: 'sim-consolidator' },
      cache: { enabled: false, dir: join(dir, 'cache') },
    }),
  );
  const records = syntheticRecords(12, { seed: 35 });
  const input = writeJsonl(join(dir, 'in.jsonl'), records);
  const out = join(dir, 'out');
  const args = ['run', '-c', config, '-i', input, '-o', out, '--range-records', '4', '--concurrency', '4', '--progress', 'none'];
  const verdicts = async () => (await readCommittedRows(new LocalObjectStore(out), 'verdicts')).map((v) => ({ id: String(v.record_id), error: v.error as string | null, degraded: Boolean(v.degraded), details: String(v.degraded_reason ?? '') }));
  const manifests = () => {
    try {
      return readdirSync(join(out, '_commits')).length;
    } catch {
      return 0;
    }
  };
  const run = (env: NodeJS.ProcessEnv, extra: string[] = []) => runCli([...args, ...extra], { env, progress: treeProbe(dir) });
  return { records, verdicts, manifests, run };
}

/** The run's stderr lines that are not log lines: the stop is exactly one. */
function fatalLines(stderr: string): string[] {
  // Log lines carry their component ("reasoning-jury: stage: ..."); the stop line does not.
  return stderr.split('\n').filter((l) => l.startsWith('reasoning-jury:') && !/^reasoning-jury: [\w-]+: /.test(l));
}

async function fixedRunJudgesAll(s: ReturnType<typeof setup>, env: NodeJS.ProcessEnv): Promise<void> {
  const again = await s.run(env);
  expect(again.code, again.stderr).toBe(0);
  const v = await s.verdicts();
  expect(v.map((x) => x.id).sort()).toEqual(s.records.map((r) => r.id).sort());
  expect(v.filter((x) => x.error !== null || x.degraded)).toEqual([]);
}

describe('run: endpoint faults stop with one line and commit nothing of them', () => {
  it('a wrong key, then an unset key variable: exit 3 at preflight naming the key; fixed, every record is judged', async () => {
    gate.served = new Set(MODELS);
    gate.deadEngine = false;
    const s = setup('key');
    const wrong = await s.run({ RJ_FAULT_KEY: 'wrong-key' });
    expect(wrong.code, wrong.stderr).toBe(3);
    const lines = fatalLines(wrong.stderr);
    expect(lines, wrong.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(/endpoint "gate" refused the API key \(HTTP 401\) for seat "jury-0" .*check the key in RJ_FAULT_KEY/);
    expect(wrong.stderr).not.toContain('wrong-key');
    expect(s.manifests()).toBe(0);
    // Without preflight the same fault meets the first records: still one line, nothing committed.
    const late = await s.run({ RJ_FAULT_KEY: 'wrong-key' }, ['--no-preflight']);
    expect(late.code, late.stderr).toBe(3);
    expect(fatalLines(late.stderr)).toHaveLength(1);
    expect(s.manifests()).toBe(0);
    const unset = await s.run({ RJ_FAULT_KEY: '' });
    expect(unset.code, unset.stderr).toBe(3);
    expect(unset.stderr).toMatch(/RJ_FAULT_KEY \(named by endpoints\.gate\.api_key_env\) is not set; sending a placeholder key/);
    expect(fatalLines(unset.stderr)[0]).toMatch(/RJ_FAULT_KEY \(named by endpoints\.gate\.api_key_env\) is not set: export it/);
    expect(s.manifests()).toBe(0);
    await fixedRunJudgesAll(s, { RJ_FAULT_KEY: 'good-key' });
  });

  it('a model the server does not serve: exit 3 naming the seat and model; fixed, every record is judged', async () => {
    gate.served = new Set(MODELS);
    gate.deadEngine = false;
    const s = setup('model', 'sim-juror-x');
    const r = await s.run({ RJ_FAULT_KEY: 'good-key' });
    expect(r.code, r.stderr).toBe(3);
    const lines = fatalLines(r.stderr);
    expect(lines, r.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(/endpoint "gate" does not serve model "sim-juror-x" of seat "jury-2" \(HTTP 404\)/);
    expect(s.manifests()).toBe(0);
    gate.served = new Set([...MODELS, 'sim-juror-x']);
    await fixedRunJudgesAll(s, { RJ_FAULT_KEY: 'good-key' });
  });

  it('chat 500 behind a 200 GET /models: the endpoint stays down until --max-outage, exit 3; fixed, every record is judged', async () => {
    gate.served = new Set(MODELS);
    gate.deadEngine = true;
    const s = setup('engine');
    const r = await s.run({ RJ_FAULT_KEY: 'good-key' }, ['--no-preflight', '--max-outage', '2s']);
    expect(r.code, r.stderr).toBe(3);
    const lines = fatalLines(r.stderr);
    expect(lines, r.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(/endpoint "gate" (has been down \(unreachable or failing every call\) for \d+ s|failed all \d+ attempt)/);
    expect(s.manifests()).toBe(0);
    gate.deadEngine = false;
    await fixedRunJudgesAll(s, { RJ_FAULT_KEY: 'good-key' });
  });

  it('a server still starting when the run begins: the preflight waits for it (no exit), then every record is judged', async () => {
    healthy();
    // No retries, and fewer preflight calls (4) than the failures in a row that put an endpoint
    // down (5): each preflight call fails at once, with no streak to trip the breaker. It puts the
    // endpoint down itself and waits; the probe (GET /models) and trial calls meet the remaining
    // resets, then the server answers.
    const s = setup('starting', 'sim-juror-c', { max_retries: 0, breaker: { failures: 5, probe_interval_ms: 50, probe_max_interval_ms: 200 } });
    gate.startingFor = 8;
    const r = await s.run({ RJ_FAULT_KEY: 'good-key' }, ['--max-outage', '5m']);
    expect(r.code, r.stderr).toBe(0);
    expect(gate.startingFor).toBe(0);
    expect(fatalLines(r.stderr)).toEqual([]);
    const v = await s.verdicts();
    expect(v.map((x) => x.id).sort()).toEqual(s.records.map((r) => r.id).sort());
    expect(v.filter((x) => x.error !== null || x.degraded)).toEqual([]);
  });

  it('a connection reset on one record: its retries end, exit 3 naming the record, nothing of it committed; fixed, every record is judged', async () => {
    healthy();
    const s = setup('reset');
    const victim = s.records[5]!;
    gate.resetOn = victim.problem;
    const r = await s.run({ RJ_FAULT_KEY: 'good-key' }, ['--no-preflight']);
    expect(r.code, r.stderr).toBe(3);
    const lines = fatalLines(r.stderr);
    expect(lines, r.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`endpoint "gate" failed all \\d+ attempt\\(s\\) of seat "[\\w-]+" \\(model "[\\w-]+"\\) for record "${victim.id}"`));
    const committed = await s.verdicts();
    expect(committed.map((v) => v.id)).not.toContain(victim.id);
    expect(committed.filter((v) => v.error !== null || v.degraded)).toEqual([]);
    gate.resetOn = undefined;
    await fixedRunJudgesAll(s, { RJ_FAULT_KEY: 'good-key' });
  });

  it('an endpoint that flaps (GET /models answers, every chat call reset): down, not a hot loop; exit 3 at --max-outage; fixed, every record is judged', async () => {
    healthy();
    const s = setup('flap');
    gate.resetOn = '"messages"';
    const before = gate.chats;
    const r = await s.run({ RJ_FAULT_KEY: 'good-key' }, ['--no-preflight', '--max-outage', '2s']);
    expect(r.code, r.stderr).toBe(3);
    const lines = fatalLines(r.stderr);
    expect(lines, r.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(/endpoint "gate" (has been down|failed all \d+ attempt)/);
    expect(s.manifests()).toBe(0);
    // Probe-paced trials, not hundreds of requests a second (the loop this replaced sent ~390/s).
    expect(gate.chats - before).toBeLessThan(200);
    gate.resetOn = undefined;
    await fixedRunJudgesAll(s, { RJ_FAULT_KEY: 'good-key' });
  });

  it('an oversized reply is that record\'s juror failure (degraded, reason in the verdict), others clean; --rejudge degraded after the fix judges it fully', async () => {
    healthy();
    const s = setup('huge', 'sim-juror-c', { max_reply_bytes: 200_000, max_retries: 1 });
    const victim = s.records[2]!;
    gate.huge = { model: 'sim-juror-b', text: victim.problem, bytes: 1_000_000 };
    const r = await s.run({ RJ_FAULT_KEY: 'good-key' }, ['--no-preflight']);
    expect(r.code, r.stderr).toBe(0);
    const v = await s.verdicts();
    expect(v).toHaveLength(s.records.length);
    const bad = v.filter((x) => x.error !== null || x.degraded);
    expect(bad.map((x) => x.id)).toEqual([victim.id]);
    expect(bad[0]!.details).toMatch(/larger than 200000 bytes/);
    gate.huge = undefined;
    const again = await s.run({ RJ_FAULT_KEY: 'good-key' }, ['--rejudge', 'degraded']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/--rejudge degraded: 1 verdict\(s\) degraded or without a verdict in 1 committed range\(s\)/);
    const after = await s.verdicts();
    expect(after.map((x) => x.id).sort()).toEqual(s.records.map((x) => x.id).sort());
    expect(after.filter((x) => x.error !== null || x.degraded)).toEqual([]);
  });
});
