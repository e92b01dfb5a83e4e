// The progress line of `run` (src/cli/progress.ts): online it is what it always was; in batch mode
// it ends with the batches' part (sent / live / done, failed or expired when any, requests
// waiting and the oldest wait).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { batchText, createProgress, waitText } from '../../src/cli/progress.js';
import type { BatchStats } from '../../src/llm/providers/batch/index.js';
import { newCounters, type StageCounters } from '../../src/pipeline/stage.js';

const stats = (over: Partial<BatchStats> = {}): BatchStats => ({ submitted: 3, in_progress: 1, completed: 2, failed: 0, requests_submitted: 3600, served_from_journal: 0, waiting: 1204, oldest_wait_ms: 252_400, ...over });

function fakeStream(): { stream: NodeJS.WriteStream; lines: string[] } {
  const lines: string[] = [];
  const stream = { isTTY: false, write: (s: string) => (lines.push(s), true) } as unknown as NodeJS.WriteStream;
  return { stream, lines };
}

const counters = (): StageCounters => ({ ...newCounters(), judged: 5, clean: 4, degraded: 1, in_flight: 7, ranges_committed: 1, tokens_in: 1500, tokens_out: 300, cost_usd: 0.0123 });

describe('progress line', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date('2025-01-01T00:00:00Z')); // no time passes: the rate is fixed
  });
  afterEach(() => vi.useRealTimers());

  it('waits read as seconds, minutes and seconds, or hours and minutes', () => {
    expect(waitText(0)).toBe('0s');
    expect(waitText(42_900)).toBe('42s');
    expect(waitText(252_400)).toBe('4m12s');
    expect(waitText(3 * 3_600_000 + 5 * 60_000 + 59_000)).toBe('3h05m');
  });

  it("the batches' part names failed or expired batches and the oldest wait only when there are some", () => {
    expect(batchText(stats())).toBe('batches 3 sent / 1 live / 2 done, 1,204 requests waiting (oldest 4m12s)');
    expect(batchText(stats({ failed: 1, submitted: 4 }))).toBe('batches 4 sent / 1 live / 2 done / 1 failed or expired, 1,204 requests waiting (oldest 4m12s)');
    expect(batchText(stats({ in_progress: 0, completed: 3, waiting: 0, oldest_wait_ms: 0 }))).toBe('batches 3 sent / 0 live / 3 done, 0 requests waiting');
  });

  it('online (no batch counters) the log line is unchanged; in batch mode it ends with the batches', () => {
    const online = fakeStream();
    createProgress('log', 10, { stream: online.stream }).stop(counters());
    expect(online.lines).toEqual(['[run] 5/10 done (4 clean, 1 degraded, 0 no verdict, 0 dead letters), 7 in flight, 1 ranges committed, 5000.0 rec/s, 1.8k tokens, $0.0123\n']);
    const batched = fakeStream();
    const view = createProgress('log', undefined, { stream: batched.stream });
    view.update(counters(), stats());
    view.update(counters(), stats({ in_progress: 0 })); // within 5 s of the last line: not written
    view.stop(counters(), stats({ in_progress: 0, completed: 3, waiting: 0 }));
    expect(batched.lines).toEqual([
      '[run] 5 done (4 clean, 1 degraded, 0 no verdict, 0 dead letters), 7 in flight, 1 ranges committed, 5000.0 rec/s, 1.8k tokens, $0.0123, batches 3 sent / 1 live / 2 done, 1,204 requests waiting (oldest 4m12s)\n',
      '[run] 5 done (4 clean, 1 degraded, 0 no verdict, 0 dead letters), 7 in flight, 1 ranges committed, 5000.0 rec/s, 1.8k tokens, $0.0123, batches 3 sent / 0 live / 3 done, 0 requests waiting\n',
    ]);
  });
});
