import { describe, expect, it } from 'vitest';
import { TurnQueue } from '../../src/llm/local/queue.js';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('TurnQueue', () => {
  it('runs one turn at a time, first come first served', async () => {
    const q = new TurnQueue();
    const log: string[] = [];
    const gate = deferred();
    const a = q.run(async () => {
      log.push('a start');
      await gate.promise;
      log.push('a end');
    });
    const b = q.run(async () => void log.push('b'));
    const c = q.run(async () => void log.push('c'));
    await Promise.resolve();
    expect(q.depth).toBe(2);
    expect(log).toEqual(['a start']);
    gate.resolve();
    await Promise.all([a, b, c]);
    expect(log).toEqual(['a start', 'a end', 'b', 'c']);
    expect(q.depth).toBe(0);
  });

  it('lets a waiter leave on abort without running, and keeps the order of the rest', async () => {
    const q = new TurnQueue();
    const gate = deferred();
    const ran: string[] = [];
    const first = q.run(() => gate.promise);
    const ctl = new AbortController();
    const leaving = q.run(async () => void ran.push('leaving'), ctl.signal);
    const staying = q.run(async () => void ran.push('staying'));
    ctl.abort(new Error('gone'));
    await expect(leaving).rejects.toThrow('gone');
    expect(q.depth).toBe(1);
    gate.resolve();
    await Promise.all([first, staying]);
    expect(ran).toEqual(['staying']);
  });

  it('frees the turn when a run throws', async () => {
    const q = new TurnQueue();
    await expect(q.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(q.run(async () => 42)).resolves.toBe(42);
  });

  it('close rejects waiters and later callers; idle waits for the running turn', async () => {
    const q = new TurnQueue();
    const gate = deferred();
    let done = false;
    const running = q.run(async () => {
      await gate.promise;
      done = true;
    });
    const waiting = q.run(async () => 'never');
    q.close(new Error('closed'));
    await expect(waiting).rejects.toThrow('closed');
    await expect(q.run(async () => 1)).rejects.toThrow('closed');
    const idle = q.idle().then(() => done);
    gate.resolve();
    await running;
    await expect(idle).resolves.toBe(true);
  });
});
