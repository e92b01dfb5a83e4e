import { describe, expect, it } from 'vitest';
import { lineLogger } from '../../src/util/log.js';
import { limitedLog, RepeatLimiter, summaryMessage } from '../../src/util/repeat-limiter.js';

function clock(start = 1_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe('RepeatLimiter', () => {
  it('writes the first event of a window, counts the rest, and reports them once the window ends', () => {
    const c = clock();
    const lim = new RepeatLimiter(10_000, c.now);
    expect(lim.admit('a', 'error', 'refused').write).toBe(true);
    for (let i = 0; i < 38; i++) {
      c.advance(250);
      expect(lim.admit('a', 'error', 'refused').write).toBe(false);
    }
    // Another key has its own window.
    expect(lim.admit('b', 'warn', 'other').write).toBe(true);
    expect(lim.due()).toEqual([]); // 9.5 s in: still open
    c.advance(500);
    const [s, ...rest] = lim.due();
    expect(rest).toEqual([]);
    expect(s).toMatchObject({ key: 'a', repeated: 38, level: 'error', msg: 'refused' });
    expect(summaryMessage(s!)).toBe('refused (repeated 38 more times in the last 10 s)');
    // After the window, the next one is written again.
    expect(lim.admit('a', 'error', 'refused').write).toBe(true);
  });

  it('an event after a window ended brings that window summary with it', () => {
    const c = clock();
    const lim = new RepeatLimiter(10_000, c.now);
    lim.admit('a', 'error', 'refused');
    lim.admit('a', 'error', 'refused');
    c.advance(12_000);
    const next = lim.admit('a', 'error', 'refused');
    expect(next.write).toBe(true);
    expect(next.summaries.map((s) => s.repeated)).toEqual([1]);
  });

  it('a window with no repeats ends silently; flush reports open windows with their elapsed time', () => {
    const c = clock();
    const lim = new RepeatLimiter(10_000, c.now);
    lim.admit('once', 'warn', 'once');
    c.advance(11_000);
    expect(lim.due()).toEqual([]);
    lim.admit('x', 'warn', 'x');
    lim.admit('x', 'warn', 'x');
    c.advance(3_000);
    expect(lim.flush()).toEqual([expect.objectContaining({ key: 'x', repeated: 1, windowMs: 3_000 })]);
    expect(lim.flush()).toEqual([]);
  });
});

describe('limitedLog', () => {
  it('through a logger: first line, then the summary with the repeat count', () => {
    const c = clock();
    const lines: string[] = [];
    const log = limitedLog(lineLogger((l) => lines.push(l), 'kafka'), new RepeatLimiter(10_000, c.now));
    for (let i = 0; i < 5; i++) log.write('error', 'k', 'Connection error: connect ECONNREFUSED', { endpoint: 'h:1' });
    expect(lines).toEqual(['reasoning-jury: kafka: error: Connection error: connect ECONNREFUSED (endpoint=h:1)\n']);
    c.advance(10_000);
    log.write('warn', 'other', 'something else');
    expect(lines.slice(1)).toEqual([
      'reasoning-jury: kafka: error: Connection error: connect ECONNREFUSED (repeated 4 more times in the last 10 s) (endpoint=h:1)\n',
      'reasoning-jury: kafka: warn: something else\n',
    ]);
    log.close();
    expect(lines).toHaveLength(3);
  });
});
