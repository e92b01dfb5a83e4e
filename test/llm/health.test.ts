/**
 * The endpoint breaker's state machine on an injected clock (no waiting), the health layer in a
 * gateway over a scripted provider, and the Phase 1 ceiling that skips outage time.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { EndpointConfig, ParticipantConfig } from '../../schemas/config.js';
import { JudgementOutput } from '../../schemas/defect.js';
import { createGateway, type Gateway } from '../../src/llm/gateway.js';
import { FLAP_WINDOW_MS, HealthRegistry, type BreakerPolicy, type HealthClock, type Ticket } from '../../src/llm/health.js';
import { EndpointFaultError, EndpointOutageError, hardFaultOf, outageKindOf } from '../../src/llm/outage.js';
import { ProviderError, type ChatRequest, type ChatResponse, type Provider } from '../../src/llm/types.js';
import { startCeiling } from '../../src/jury/phase1.js';

/** A clock whose time moves only when the test says so; timers fire in time order. */
class ManualClock implements HealthClock {
  private t = 1_000_000;
  private timers: Array<{ at: number; fn: () => void; id: number }> = [];
  private next = 1;
  now = () => this.t;
  setTimeout = (fn: () => void, ms: number) => {
    const id = this.next++;
    this.timers.push({ at: this.t + ms, fn, id });
    return id;
  };
  clearTimeout = (h: unknown) => {
    this.timers = this.timers.filter((x) => x.id !== h);
  };
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      this.timers.sort((a, b) => a.at - b.at);
      const due = this.timers[0];
      if (!due || due.at > end) break;
      this.timers.shift();
      this.t = due.at;
      due.fn();
      await flush();
    }
    this.t = end;
    await flush();
  }
}

const flush = () => new Promise<void>((r) => setImmediate(r));
const POLICY: BreakerPolicy = { failures: 3, probeIntervalMs: 1000, probeMaxIntervalMs: 4000 };
const UP: Ticket = { probe: false };

function setup(maxOutageMs = 60_000) {
  const clock = new ManualClock();
  const reg = new HealthRegistry(maxOutageMs, clock);
  let changes = 0;
  reg.view.onChange(() => changes++);
  const b = reg.breaker('sim', POLICY);
  return { clock, reg, b, view: reg.view, changes: () => changes };
}

/** A pending admit() with its settlement visible. */
function track(p: Promise<Ticket>) {
  const s: { ticket?: Ticket; error?: Error } = {};
  p.then((t) => (s.ticket = t), (e: Error) => (s.error = e));
  return s;
}

describe('endpoint breaker', () => {
  it('stays up below the threshold, goes down at it, and a success resets the count', async () => {
    const { b, view } = setup();
    b.failed(UP, 'refused');
    b.failed(UP, '502');
    b.answered();
    expect(view.endpoints()[0]).toMatchObject({ state: 'up', failures: 0 });
    b.failed(UP, 't');
    b.failed(UP, 't');
    expect(view.anyDown()).toBe(false);
    b.failed(UP, 'no answer');
    expect(view.endpoints()[0]).toMatchObject({ name: 'sim', state: 'down', failures: 3, outages: 1, last_error: 'no answer', gave_up: false });
    expect(view.anyDown()).toBe(true);
    expect(view.allDown()).toBe(true);
  });

  it('while down, attempts wait; one goes out as the trial; its answer releases all', async () => {
    const { b, clock, view } = setup();
    for (let i = 0; i < 3; i++) b.failed(UP, 'refused');
    const w1 = track(b.admit());
    const w2 = track(b.admit());
    await clock.advance(999);
    expect(w1.ticket).toBeUndefined();
    await clock.advance(1);
    expect(w1.ticket).toEqual({ probe: true });
    expect(w2.ticket).toBeUndefined();
    expect(view.endpoints()[0]!.state).toBe('probing');
    expect(view.anyDown()).toBe(true); // a trial still holds intake
    await clock.advance(500);
    b.answered();
    await flush();
    expect(w2.ticket).toEqual({ probe: false });
    expect(view.endpoints()[0]).toMatchObject({ state: 'up', failures: 0, down_ms: 1500 });
    expect(view.downMs()).toBe(1500);
  });

  it('a failed trial puts it down again with a doubled delay, capped', async () => {
    const { b, clock, view } = setup();
    for (let i = 0; i < 3; i++) b.failed(UP, 'refused');
    const delays: number[] = [];
    let at = clock.now();
    for (let round = 0; round < 4; round++) {
      const w = track(b.admit());
      while (!w.ticket) await clock.advance(100);
      delays.push(clock.now() - at);
      b.failed(w.ticket, 'refused');
      expect(view.endpoints()[0]!.state).toBe('down');
      at = clock.now();
    }
    expect(delays).toEqual([1000, 2000, 4000, 4000]);
    expect(view.endpoints()[0]!.outages).toBe(1); // one outage, however many trials
  });

  it('any answer to the trial (a 4xx: the server read it) brings it up', async () => {
    const { b, clock, view } = setup();
    for (let i = 0; i < 3; i++) b.failed(UP, '503');
    const w = track(b.admit());
    await clock.advance(1000);
    expect(w.ticket?.probe).toBe(true);
    b.answered(); // what the health layer does for a failure that is the record's own
    expect(view.anyDown()).toBe(false);
  });

  it('beyond the maximum outage every waiting and later attempt fails with EndpointOutageError', async () => {
    const { b, clock, view } = setup(10_000);
    for (let i = 0; i < 3; i++) b.failed(UP, 'connect ECONNREFUSED 127.0.0.1:9');
    const waiting = [track(b.admit()), track(b.admit())];
    // Trials keep failing; each one goes back to waiting, as the retry layer does.
    for (let t = 0; t < 10_000; t += 500) {
      await clock.advance(500);
      for (const w of waiting) if (w.ticket?.probe) {
        b.failed(w.ticket, 'connect ECONNREFUSED 127.0.0.1:9');
        waiting.splice(waiting.indexOf(w), 1, track(b.admit()));
      }
    }
    await flush();
    for (const w of waiting) {
      expect(w.error).toBeInstanceOf(EndpointOutageError);
      expect(w.error!.message).toMatch(/endpoint "sim" has been down \(unreachable or failing every call\) for 10 s, longer than the allowed outage of 10 s \(last error: connect ECONNREFUSED 127\.0\.0\.1:9\)/);
    }
    await expect(b.admit()).rejects.toBeInstanceOf(EndpointOutageError);
    expect(view.endpoints()[0]).toMatchObject({ state: 'down', gave_up: true });
  });

  it('with nobody waiting at trial time the next attempt is the trial, and the outage clock keeps running', async () => {
    const { b, clock, view } = setup(5000);
    for (let i = 0; i < 3; i++) b.failed(UP, 'refused');
    await clock.advance(1000);
    expect(view.endpoints()[0]!.state).toBe('up'); // intake may bring the attempt that will be the trial
    const trial = track(b.admit());
    const other = track(b.admit());
    await flush();
    expect(trial.ticket).toEqual({ probe: true });
    expect(other.ticket).toBeUndefined();
    expect(view.endpoints()[0]!.state).toBe('probing');
    b.failed(trial.ticket!, 'refused');
    expect(view.endpoints()[0]!.outages).toBe(1);
    await clock.advance(2000);
    expect(other.ticket?.probe).toBe(true);
    b.failed(other.ticket!, 'refused');
    await clock.advance(1999);
    expect(view.endpoints()[0]!.gave_up).toBe(false);
    await clock.advance(1); // 5 s after the first trip
    expect(view.endpoints()[0]!.gave_up).toBe(true);
    await expect(b.admit()).rejects.toBeInstanceOf(EndpointOutageError);
  });

  it('an endpoint that flaps (answers, then down again at once) keeps its outage clock running', async () => {
    const { b, clock, view } = setup(5000);
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 3; i++) b.failed(UP, 'reset');
      await clock.advance(2000);
      b.answered(); // one call got through
      expect(view.endpoints()[0]!.state).toBe('up');
    }
    for (let i = 0; i < 3; i++) b.failed(UP, 'reset');
    await clock.advance(999);
    expect(view.endpoints()[0]!.gave_up).toBe(false);
    await clock.advance(1); // 2 + 2 + 1 s down within the flap window: 5 s in all
    expect(view.endpoints()[0]!.gave_up).toBe(true);
    expect(((await b.admit().catch((e: Error) => e)) as Error).message).toMatch(/has been down .* for 5 s/);
  });

  it('an outage long after the last one ended starts a fresh clock', async () => {
    const { b, clock, view } = setup(5000);
    for (let i = 0; i < 3; i++) b.failed(UP, 'reset');
    await clock.advance(4000);
    b.answered();
    await clock.advance(FLAP_WINDOW_MS);
    for (let i = 0; i < 3; i++) b.failed(UP, 'reset');
    await clock.advance(4000);
    expect(view.endpoints()[0]!.gave_up).toBe(false);
  });

  it('a waiter whose caller aborts leaves the queue; an aborted trial passes to the next attempt', async () => {
    const { b, clock, view } = setup();
    for (let i = 0; i < 3; i++) b.failed(UP, 'refused');
    const ctl = new AbortController();
    const gone = track(b.admit(ctl.signal));
    ctl.abort(new Error('ceiling'));
    await flush();
    expect(gone.error?.message).toBe('ceiling');
    const w = track(b.admit());
    const w2 = track(b.admit());
    await clock.advance(1000);
    expect(w.ticket?.probe).toBe(true);
    b.abandoned(w.ticket!);
    await flush();
    expect(w2.ticket?.probe).toBe(true);
    expect(view.endpoints()[0]!.state).toBe('probing');
  });

  it('a fault waiting cannot heal fails every waiting and later attempt with it at once', async () => {
    const { b, view } = setup();
    for (let i = 0; i < 3; i++) b.failed(UP, 'refused');
    const w = track(b.admit());
    const fault = new EndpointFaultError('sim', 'auth', 'endpoint "sim" refused the API key');
    expect(b.fault(fault)).toBe(fault);
    await flush();
    expect(w.error).toBe(fault);
    await expect(b.admit()).rejects.toBe(fault);
    expect(view.endpoints()[0]).toMatchObject({ gave_up: true });
  });

  it('stopWaiting fails the waiting attempts at once, saying the run stopped', async () => {
    const { b, reg } = setup();
    for (let i = 0; i < 3; i++) b.failed(UP, 'refused');
    const w = track(b.admit());
    reg.stopWaiting();
    await flush();
    expect(w.error).toBeInstanceOf(EndpointOutageError);
    expect(w.error!.message).toMatch(/^stopped while endpoint "sim" was down/);
  });

  it('with a provider probe, a trial call goes only once the server answers it, and the trial decides', async () => {
    const clock = new ManualClock();
    const reg = new HealthRegistry(60_000, clock);
    let serving = false;
    let probes = 0;
    const b = reg.breaker('sim', { ...POLICY, probe: async () => {
      probes++;
      if (!serving) throw new ProviderError('probe GET /models: connect ECONNREFUSED', true, undefined, undefined, 'connection');
    } });
    for (let i = 0; i < 3; i++) b.failed(UP, '500');
    const w = track(b.admit());
    const w2 = track(b.admit());
    await clock.advance(0);
    expect(probes).toBe(1); // asked at once
    expect(w.ticket).toBeUndefined(); // no call is spent while the server does not answer
    expect(reg.view.endpoints()[0]).toMatchObject({ state: 'down', last_error: 'probe GET /models: connect ECONNREFUSED' });
    await clock.advance(1000);
    expect(probes).toBe(2);
    await clock.advance(1999);
    expect(probes).toBe(2); // then a doubled delay
    serving = true;
    await clock.advance(1);
    expect(probes).toBe(3);
    expect(w.ticket).toEqual({ probe: true });
    expect(w2.ticket).toBeUndefined();
    // A dead engine behind a live front: the probe answers, the trial call fails: down again.
    b.failed(w.ticket!, '500');
    expect(reg.view.endpoints()[0]).toMatchObject({ state: 'down' });
    await clock.advance(4000);
    expect(w2.ticket).toEqual({ probe: true });
    b.answered();
    expect(reg.view.endpoints()[0]).toMatchObject({ state: 'up', failures: 0 });
  });

  it('reports changes to listeners', () => {
    const { b, changes } = setup();
    for (let i = 0; i < 3; i++) b.failed(UP, 'refused');
    expect(changes()).toBe(1);
  });
});

describe('outage kinds', () => {
  it('connection, timeout and 5xx are outages; 4xx, refusals and bad replies are the record\'s own', () => {
    expect(outageKindOf(new ProviderError('connection error', true, undefined, undefined, 'connection'))).toBe('connection');
    expect(outageKindOf(new ProviderError('timeout', true, undefined, undefined, 'timeout'))).toBe('timeout');
    expect(outageKindOf(new ProviderError('HTTP 503', true, 503))).toBe('server_error');
    expect(outageKindOf(new ProviderError('HTTP 429', true, 429))).toBeNull();
    expect(outageKindOf(new ProviderError('HTTP 400', false, 400))).toBeNull();
    expect(outageKindOf(new ProviderError('response has no choices', true, 200))).toBeNull();
    expect(outageKindOf(new Error('bug'))).toBeNull();
  });

  it('401, 403 and 404 are faults waiting cannot heal; other statuses and a refused field are not', () => {
    expect(hardFaultOf(new ProviderError('HTTP 401', false, 401))).toBe('auth');
    expect(hardFaultOf(new ProviderError('HTTP 403', false, 403))).toBe('permission');
    expect(hardFaultOf(new ProviderError('HTTP 404', false, 404))).toBe('unknown_model');
    expect(hardFaultOf(new ProviderError('HTTP 400', false, 400))).toBeNull();
    expect(hardFaultOf(new ProviderError('HTTP 500', true, 500))).toBeNull();
    expect(hardFaultOf(new ProviderError('reset', true, undefined, undefined, 'connection'))).toBeNull();
  });
});

describe('health layer in the gateway', () => {
  let gw: Gateway | undefined;
  afterEach(async () => gw?.close());

  /** A provider that refuses connections until `upAt`, then answers; counts attempts. */
  function flakyProvider(upAt: { t: number }): Provider & { attempts: number } {
    const p = {
      name: 'flaky',
      attempts: 0,
      async complete(_req: ChatRequest, _signal: AbortSignal): Promise<ChatResponse> {
        p.attempts++;
        if (Date.now() < upAt.t) throw new ProviderError('connection error: connect ECONNREFUSED', true, undefined, undefined, 'connection');
        return { content: '{"negatives":[]}', tokens_in: 10, tokens_out: 5 };
      },
    };
    return p;
  }

  it('calls made while the server is down wait and succeed once it is back; only attempts sent spend retries', async () => {
    const upAt = { t: Date.now() + 600 };
    const provider = flakyProvider(upAt);
    const endpoint = EndpointConfig.parse({ base_url: 'http://127.0.0.1:9/v1', max_retries: 3, backoff_base_ms: 5, backoff_max_ms: 10, breaker: { failures: 2, probe_interval_ms: 50, probe_max_interval_ms: 100 } });
    gw = createGateway({ endpoints: { sim: endpoint }, prices: {}, cache: { enabled: false, dir: '/tmp/unused' }, auditLogPath: null, providerFor: () => provider });
    const seat = ParticipantConfig.parse({ id: 'j', endpoint: 'sim', model: 'm' });
    const states = new Set<string>();
    gw.health.onChange(() => states.add(gw!.health.endpoints()[0]!.state));
    const calls = Array.from({ length: 6 }, (_, i) =>
      gw!.structured({ ctx: { record_id: `r${i}`, phase: 'phase1', participant: 'j', caller: 't' }, seat, messages: [{ role: 'user', content: 'x' }], schema: JudgementOutput, schemaName: 'JudgementOutput' }),
    );
    const results = await Promise.all(calls);
    expect(results.every((r) => r.usage.outcome === 'ok')).toBe(true);
    // Waiting is free: each call spent its first attempt and at most the trials it was picked for.
    expect(results.every((r) => r.usage.attempts <= 4)).toBe(true);
    expect(provider.attempts).toBeLessThan(6 * 4);
    expect(states).toEqual(new Set(['down', 'probing', 'up']));
    expect(gw.health.endpoints()[0]).toMatchObject({ state: 'up', outages: 1 });
    expect(gw.health.downMs()).toBeGreaterThan(0);
  });

  it('a server that never comes back fails the waiting calls with EndpointOutageError after the maximum outage', async () => {
    const provider = flakyProvider({ t: Number.POSITIVE_INFINITY });
    const endpoint = EndpointConfig.parse({ base_url: 'http://127.0.0.1:9/v1', max_retries: 100, backoff_base_ms: 1, backoff_max_ms: 2, breaker: { failures: 1, probe_interval_ms: 20, probe_max_interval_ms: 40 } });
    gw = createGateway({ endpoints: { sim: endpoint }, prices: {}, cache: { enabled: false, dir: '/tmp/unused' }, auditLogPath: null, providerFor: () => provider, maxOutageMs: 300 });
    const seat = ParticipantConfig.parse({ id: 'j', endpoint: 'sim', model: 'm' });
    const call = gw.text({ ctx: { record_id: 'r', phase: 'phase1', participant: 'j', caller: 't' }, seat, messages: [{ role: 'user', content: 'x' }] });
    await expect(call).rejects.toBeInstanceOf(EndpointOutageError);
    expect(gw.ledger.summary().total.calls).toBe(0); // no failed call in the ledger: the call never ended
  });
});

describe('phase 1 ceiling', () => {
  it('expires after the timeout of time without an outage, not of wall clock', async () => {
    let expired = 0;
    const t0 = Date.now();
    // An outage covers the first 150 ms: none of that counts.
    const stop = startCeiling(100, () => Math.min(Date.now() - t0, 150), () => expired++);
    await new Promise((r) => setTimeout(r, 150));
    expect(expired).toBe(0);
    while (expired === 0) await new Promise((r) => setTimeout(r, 10));
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    expect(expired).toBe(1);
    stop();
  });
});
