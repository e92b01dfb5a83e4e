/**
 * Phase 1 admission (src/jury/admission.ts) and the queue-aware Phase 1 ceiling: a record starts
 * Phase 1 only when its endpoints can take the calls soon, and a juror's ceiling does not count
 * the time its call waits in our own limiter.
 */
import { describe, expect, it } from 'vitest';
import { ParticipantConfig } from '../../schemas/config.js';
import { phase1Admission, type Phase1Pass } from '../../src/jury/admission.js';
import { runPhase1 } from '../../src/jury/phase1.js';
import type { CallResult, ModelGateway, StructuredCall } from '../../src/llm/types.js';

const on = (endpoint: string, n: number) => Array.from({ length: n }, () => ({ endpoint }));
const tick = () => new Promise((r) => setImmediate(r));

describe('phase 1 admission', () => {
  it('single-slot endpoint, 3 jurors: the next record enters when the previous one has its last call left', async () => {
    const adm = phase1Admission(() => 1);
    const first = await adm.enter(on('slow', 3));
    expect(adm.outstanding('slow')).toBe(3);
    let second: Phase1Pass | undefined;
    void adm.enter(on('slow', 3)).then((p) => (second = p));
    await tick();
    expect(second).toBeUndefined();
    expect(adm.waiting).toBe(1);
    first.done('slow');
    await tick();
    expect(second).toBeUndefined(); // 2 + 3 > 1 + max(1, 3)
    first.done('slow');
    await tick();
    expect(second).toBeDefined(); // 1 + 3 <= 4: its calls queue behind the last one in flight
    expect(adm.outstanding('slow')).toBe(4);
    first.release();
    second!.release();
    expect(adm.outstanding('slow')).toBe(0);
  });

  it('a fast endpoint keeps about twice its capacity outstanding, so it never runs dry', async () => {
    const adm = phase1Admission(() => 32);
    const passes: Phase1Pass[] = [];
    for (let i = 0; i < 21; i++) passes.push(await adm.enter(on('fast', 3)));
    expect(adm.outstanding('fast')).toBe(63);
    let late = false;
    void adm.enter(on('fast', 3)).then(() => (late = true));
    await tick();
    expect(late).toBe(false);
    passes[0]!.done('fast');
    passes[0]!.done('fast');
    await tick();
    expect(late).toBe(true); // 61 + 3 <= 64
  });

  it('admits in arrival order, per endpoint; a pass gives back only its own share; unknown endpoints are not held', async () => {
    const adm = phase1Admission((e) => (e === 'a' ? 1 : undefined));
    const p1 = await adm.enter([...on('a', 2), ...on('free', 5)]);
    const order: string[] = [];
    void adm.enter(on('a', 2)).then((p) => (order.push('big'), p.release()));
    void adm.enter(on('a', 1)).then((p) => (order.push('small'), p.release()));
    await tick();
    expect(order).toEqual([]); // 'small' would fit (2 + 1 <= 2) but does not overtake 'big'
    p1.done('a');
    p1.done('a');
    p1.done('a'); // a third done on 'a' is not this pass's to give
    await tick();
    expect(order).toEqual(['big', 'small']);
    expect(adm.outstanding('free')).toBe(5);
    p1.release();
    expect(adm.outstanding('free')).toBe(0);
    expect(adm.outstanding('a')).toBe(0);
    await adm.enter(on('free', 100)); // never held
  });
});

describe('phase 1 ceiling and our own queue', () => {
  const seats = ['j0', 'j1'].map((id) => ParticipantConfig.parse({ id, endpoint: 'ep', model: 'm' }));

  /** j0 waits 1 s in "our limiter" then answers in 20 ms; j1 answers only when aborted. */
  const gateway: ModelGateway = {
    async structured<T>(c: StructuredCall<T>): Promise<CallResult<T>> {
      if (c.seat.id === 'j1') {
        await new Promise((_r, reject) => c.signal!.addEventListener('abort', () => reject(c.signal!.reason as Error), { once: true }));
      }
      c.onQueue?.(true);
      await new Promise((r) => setTimeout(r, 1000));
      c.onQueue?.(false);
      await new Promise((r) => setTimeout(r, 20));
      if (c.signal?.aborted) throw c.signal.reason as Error;
      const usage = { phase: 'phase1' as const, participant: c.seat.id, model: 'm', endpoint: 'ep', tokens_in: 1, tokens_out: 1, cost_usd: 0, latency_ms: 20, attempts: 1, outcome: 'ok' as const };
      return { value: { negatives: [] } as T, raw: '{"negatives":[]}', usage, cached: false };
    },
    text: () => Promise.reject(new Error('not used')),
  };

  it('a juror queued longer than the ceiling keeps its seat; one that hangs at the endpoint still loses it', async () => {
    const done: string[] = [];
    const r = await runPhase1({ gateway, recordId: 'r', jurors: seats, messages: [{ role: 'user', content: 'x' }], nSteps: 1, timeoutMs: 250, onJurorDone: (s) => done.push(s.id) });
    expect(r.judgements[0]).toMatchObject({ juror_id: 'j0', ok: true });
    expect(r.judgements[1]).toMatchObject({ juror_id: 'j1', ok: false, error: 'phase 1 wall-clock ceiling of 250 ms reached' });
    expect(done.sort()).toEqual(['j0', 'j1']);
  });
});
