/**
 * Time spent waiting in our own limiter is ours, not the endpoint's (issue 18, point 5): the
 * limit layer tells a call when it waits and when it is dispatched, the audit line's latency_ms
 * starts at dispatch with the wait beside it as queue_ms (metrics: the same split), and the
 * call's usage latency (ledger, verdict) leaves the wait out.
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EndpointConfig, ParticipantConfig } from '../../schemas/config.js';
import type { AuditEntry } from '../../src/llm/audit.js';
import { createGateway, type Gateway } from '../../src/llm/gateway.js';
import { limitLayer } from '../../src/llm/layers/limit.js';
import type { AttemptEvent } from '../../src/llm/observer.js';
import { newMeter } from '../../src/llm/layers/usage.js';
import { createLimiter } from '../../src/llm/limits.js';
import type { AttemptInfo, CallInfo, Completion } from '../../src/llm/model.js';
import { queueClock } from '../../src/llm/queue-clock.js';
import type { ChatRequest, ChatResponse, Provider } from '../../src/llm/types.js';

const seat = ParticipantConfig.parse({ id: 'juror-a', endpoint: 'ep', model: 'm' });
const req: ChatRequest = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
const reply = (content: string): Completion => ({ content, finish_reason: 'stop', tokens_in: 3, tokens_out: 2 });

function info(events: string[], name: string, signal = new AbortController().signal): AttemptInfo {
  const call: CallInfo = { ctx: { record_id: 'r', phase: 'phase1', participant: name, caller: 't' }, seat, kind: 'text', meter: newMeter(), onQueue: (w) => events.push(`${name} ${w ? 'waits' : 'leaves'}`) };
  return { call, turn: 'initial', signal, willRetry: () => false, onStart: () => events.push(`${name} starts`) };
}

/** A promise and its resolve, to hold an attempt in flight until the test lets it go. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

describe('limit layer: onQueue', () => {
  it('says when an attempt waits for a slot and when it leaves: dispatched, or aborted while queued', async () => {
    const limiter = createLimiter({ max_concurrency: 1 });
    const events: string[] = [];
    const hold = gate();
    const attempt = limitLayer(limiter)(async (_r, a) => {
      if (a.call.ctx.participant === 'a') await hold.promise;
      return reply('x');
    });
    const first = attempt(req, info(events, 'a'));
    const second = attempt(req, info(events, 'b'));
    const abort = new AbortController();
    const third = attempt(req, info(events, 'c', abort.signal));
    await new Promise((r) => setImmediate(r));
    expect(events).toEqual(['a waits', 'a leaves', 'a starts', 'b waits', 'c waits']); // a slot was free for a
    abort.abort(new Error('given up'));
    await expect(third).rejects.toThrow();
    expect(events.at(-1)).toBe('c leaves'); // never dispatched, but no longer waiting either
    hold.open();
    await Promise.all([first, second]);
    expect(events.slice(5)).toEqual(['c leaves', 'b leaves', 'b starts']);
    await limiter.close();
  });

  it('queueClock adds up waits, the current one included', () => {
    let t = 0;
    const q = queueClock(() => t);
    q.onQueue(true);
    t = 100;
    q.onQueue(false);
    t = 150;
    expect(q.ms()).toBe(100);
    q.onQueue(true);
    t = 170;
    expect(q.ms()).toBe(120);
    q.onQueue(false);
    q.onQueue(false); // a second "leaves" changes nothing
    t = 500;
    expect(q.ms()).toBe(120);
  });
});

describe('gateway: latency without our queue', () => {
  let gw: Gateway | undefined;
  afterEach(async () => {
    await gw?.close();
    gw = undefined;
  });

  it('audit latency_ms starts at dispatch and queue_ms holds the wait; usage latency leaves the wait out', async () => {
    let t = 0;
    const holds = [gate(), gate()];
    let n = 0;
    const provider: Provider = {
      name: 'p',
      async complete(): Promise<ChatResponse> {
        await holds[n++]!.promise;
        return { content: 'ok', tokens_in: 1, tokens_out: 1 };
      },
    };
    const dir = await mkdtemp(join(tmpdir(), 'rj-queue-'));
    const auditLogPath = join(dir, 'audit.jsonl');
    const endpoint = EndpointConfig.parse({ base_url: 'http://127.0.0.1:9/v1', max_concurrency: 1 });
    const attempts: AttemptEvent[] = [];
    gw = createGateway({ endpoints: { ep: endpoint }, prices: {}, cache: { enabled: false, dir }, auditLogPath, providerFor: () => provider, now: () => t, observer: { onAttempt: (e) => attempts.push(e) } });
    const waits: boolean[] = [];
    const call = (participant: string) => gw!.text({ ctx: { record_id: 'r', phase: 'phase1', participant, caller: 't' }, seat, messages: [{ role: 'user', content: participant }], onQueue: (w) => waits.push(w) });
    const first = call('a');
    const second = call('b');
    await new Promise((r) => setImmediate(r));
    t = 1000; // the first call takes 1 s at the endpoint; the second waits for it in our limiter
    holds[0]!.open();
    const a = await first;
    await new Promise((r) => setImmediate(r));
    t = 1300; // the second, dispatched at 1000, takes 300 ms
    holds[1]!.open();
    const b = await second;
    expect(a.usage.latency_ms).toBe(1000);
    expect(b.usage.latency_ms).toBe(300);
    expect(waits).toEqual([true, false, true, false]);
    expect(attempts.map((e) => [e.seconds, e.queueSeconds])).toEqual([[1, 0], [0.3, 1]]); // metrics: the same split
    await gw.close();
    gw = undefined;
    const lines = (await readFile(auditLogPath, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as AuditEntry);
    const byWho = Object.fromEntries(lines.map((l) => [l.participant, l]));
    expect(byWho.a).toMatchObject({ latency_ms: 1000, queue_ms: 0, outcome: 'ok' });
    expect(byWho.b).toMatchObject({ latency_ms: 300, queue_ms: 1000, outcome: 'ok' });
  });
});
