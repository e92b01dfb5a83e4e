/**
 * One slow server that decodes one request at a time (issue 18, point 5), reached through the
 * real `openai` client: every chat completion takes SERVICE_MS, and a request that arrives while
 * another is being answered waits on the server, as llama.cpp's and llama-cpp-python's servers
 * do. The endpoint is configured `max_concurrency: 1`, so the waiting happens in our limiter.
 *
 * The Phase 1 ceiling and timeout_ms are CEILING_MS: several times one call, far less than the
 * time a record's jurors spend queued. Counting only dispatch-to-reply time, no juror may lose
 * its seat to the queue. Only lower bounds of time are asserted (a reply takes at least
 * SERVICE_MS, so n calls ahead mean a wait of at least n * SERVICE_MS), and the one upper bound
 * (latency_ms < CEILING_MS) is the mechanism itself, with a 5x margin.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import PQueue from 'p-queue';
import YAML from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import type { Verdict } from '../../schemas/verdict.js';
import { parseConfig } from '../../src/config/load.js';
import { openRuntime } from '../../src/compose/runtime.js';
import { judgeRecord } from '../../src/jury/judge.js';
import type { AuditEntry } from '../../src/llm/audit.js';
import { LocalObjectStore } from '../../src/pipeline/storage/object-store.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { prepareRecord } from '../../src/pipeline/steps/segment.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { runCli } from '../helpers/cli.js';
import { treeProbe } from '../helpers/progress.js';
import { tempDir, writeJsonl } from '../helpers/run-setup.js';

const SERVICE_MS = 300;
const CEILING_MS = 5 * SERVICE_MS;

interface SingleSlotServer {
  url: string;
  /** chat completions answered */
  answered: number;
  /** most requests the server held at once (answering one, the rest waiting on it) */
  maxHeld: number;
  close(): Promise<void>;
}

/** Answers `{"negatives": []}` to every chat completion, one at a time, SERVICE_MS each. */
async function startSingleSlotServer(): Promise<SingleSlotServer> {
  const state = { answered: 0, maxHeld: 0, held: 0 };
  let busy: Promise<void> = Promise.resolve();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) return void res.writeHead(404).end();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model?: string };
      state.held += 1;
      state.maxHeld = Math.max(state.maxHeld, state.held);
      busy = busy.then(
        () =>
          new Promise<void>((done) =>
            setTimeout(() => {
              state.held -= 1;
              state.answered += 1;
              const completion = {
                id: 'chatcmpl-slow',
                object: 'chat.completion',
                created: 1_700_000_000,
                model: body.model ?? 'm',
                choices: [{ index: 0, message: { role: 'assistant', content: '{"negatives": []}' }, finish_reason: 'stop' }],
                usage: { prompt_tokens: 50, completion_tokens: 5, total_tokens: 55 },
              };
              if (!res.destroyed) res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(completion));
              done();
            }, SERVICE_MS),
          ),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    get answered() {
      return state.answered;
    },
    get maxHeld() {
      return state.maxHeld;
    },
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

/** 3 jurors (+ consolidator) on the one slow endpoint; Phase 1 ceiling and timeout_ms = CEILING_MS. */
function juryConfig(url: string, dir: string, mode: 'consolidation' | 'union') {
  return {
    endpoints: { slow: { base_url: url, max_concurrency: 1, timeout_ms: CEILING_MS, max_retries: 0 } },
    jurors: ['a', 'b', 'c'].map((x, i) => ({ id: `jury-${i}`, endpoint: 'slow', model: `juror-${x}` })),
    consolidator: { id: 'consolidator', endpoint: 'slow', model: 'consolidator' },
    mode,
    phase1_timeout_ms: CEILING_MS,
    cache: { enabled: false, dir: join(dir, 'cache') },
    audit_log: { path: join(dir, 'audit.jsonl') },
  };
}

function audit(dir: string): AuditEntry[] {
  return readFileSync(join(dir, 'audit.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as AuditEntry);
}

/** What every audit line must show: answered in time, its own wait in our queue beside it. */
function expectDispatchTimed(lines: AuditEntry[]): void {
  for (const l of lines) {
    expect(l.outcome).toBe('ok');
    expect(l.attempt).toBe(1);
    expect(l.latency_ms).toBeGreaterThanOrEqual(SERVICE_MS - 5); // the server's time is counted...
    expect(l.latency_ms).toBeLessThan(CEILING_MS); // ...and only that
    expect(typeof l.queue_ms).toBe('number');
  }
}

/**
 * Most records whose Phase 1 calls overlap: a record's span runs from its first juror call
 * entering our queue (ts - latency_ms - queue_ms) to its last reply (ts). Spans of records that
 * do not overlap are at least one SERVICE_MS apart on a single-slot server, so a 20 ms trim of
 * each span's end absorbs the rounding of the three clocks' readings.
 */
function mostRecordsInPhase1(lines: AuditEntry[]): number {
  const spans = new Map<string, { start: number; end: number }>();
  for (const l of lines) {
    const end = Date.parse(l.ts);
    const start = end - l.latency_ms - l.queue_ms!;
    const s = spans.get(l.record_id);
    spans.set(l.record_id, s ? { start: Math.min(s.start, start), end: Math.max(s.end, end) } : { start, end });
  }
  const all = [...spans.values()];
  return Math.max(...all.map((p) => all.filter((s) => s.start <= p.start && p.start < s.end - 20).length));
}

let server: SingleSlotServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('one slow single-slot endpoint, 16 records at once', () => {
  it('jury runtime without admission: jurors queued far beyond the ceiling all keep their seats', async () => {
    server = await startSingleSlotServer();
    const dir = tempDir('slow-jury');
    const config = parseConfig(juryConfig(server.url, dir, 'union'));
    const records = syntheticRecords(8, { seed: 18 });
    const rt = await openRuntime({ config });
    // The admission would hold records back; without it all 24 juror calls queue in our limiter at once.
    const jury = { ...rt.jury, admission: undefined };
    const queue = new PQueue({ concurrency: 16 });
    let verdicts: Verdict[];
    try {
      verdicts = await Promise.all(
        records.map((r) =>
          queue.add(async () => {
            const p = prepareRecord(r, config);
            if (!p.ok) throw new Error(p.error);
            return judgeRecord(jury, p.input);
          }),
        ),
      ) as Verdict[];
    } finally {
      await rt.close();
    }
    for (const v of verdicts) {
      expect(v.error).toBeNull();
      expect(v.degraded_reason).toBeNull();
      expect(v.jurors_ok).toBe(3);
      // usage latency (ledger, verdict) is dispatch-to-reply too
      for (const u of v.usage) expect(u.latency_ms).toBeLessThan(CEILING_MS);
    }
    const lines = audit(dir);
    expect(lines).toHaveLength(24);
    expectDispatchTimed(lines);
    // The last call had 23 ahead of it: its wait alone is several ceilings long.
    const waits = lines.map((l) => l.queue_ms!).sort((a, b) => a - b);
    expect(waits.at(-1)).toBeGreaterThanOrEqual(23 * SERVICE_MS - 50);
    expect(waits.filter((w) => w > CEILING_MS).length).toBeGreaterThanOrEqual(15);
    expect(server.maxHeld).toBe(1); // max_concurrency 1: the server never queued a request
  });

  it('`run --concurrency 16`: every record gets a full verdict, and the admission keeps our queue short', async () => {
    server = await startSingleSlotServer();
    const dir = tempDir('slow-run');
    const cfg = join(dir, 'jury.yaml');
    writeFileSync(cfg, YAML.stringify(juryConfig(server.url, dir, 'consolidation')));
    const records = syntheticRecords(6, { seed: 18 });
    const input = writeJsonl(join(dir, 'in.jsonl'), records);
    const out = join(dir, 'out');
    const res = await runCli(['run', '-c', cfg, '-i', input, '-o', out, '--concurrency', '16', '--progress', 'none'], { progress: treeProbe(dir) });
    expect(res.stderr).not.toMatch(/ceiling/);
    expect(res.code).toBe(0);
    const rows = await readCommittedRows(new LocalObjectStore(out), 'verdicts');
    expect(rows).toHaveLength(records.length);
    for (const r of rows) expect(r).toMatchObject({ error: null, degraded: false, jurors_ok: 3, jurors_total: 3 });
    const all = audit(dir);
    // Before any record, the run's preflight: one request per distinct (endpoint, model).
    const preflight = all.filter((l) => l.record_id === '(preflight)');
    expect(preflight).toHaveLength(4);
    const lines = all.filter((l) => l.record_id !== '(preflight)');
    expect(lines).toHaveLength(records.length * 4);
    expectDispatchTimed(all);
    // Record by record, Phase 1 still waits in our queue: the third juror of the first record
    // admitted waits for the two ahead of it.
    const phase1 = lines.filter((l) => l.phase === 'phase1');
    expect(Math.max(...phase1.map((l) => l.queue_ms!))).toBeGreaterThanOrEqual(2 * SERVICE_MS - 50);
    // The admission lets a record in only when at most one Phase 1 call of the one before is
    // outstanding, so at most 2 records ever have juror calls queued or in flight at once.
    // Without it all 6 would: their 18 juror calls would queue together.
    expect(mostRecordsInPhase1(phase1)).toBeLessThanOrEqual(2);
    expect(server.maxHeld).toBe(1);
  });
});
