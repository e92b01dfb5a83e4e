import { join } from 'node:path';
import type { TraceRecord } from '../schemas/trace.js';
import { loadProcessBench } from '../src/eval/adapters/processbench.js';
import { sharedDataDir } from '../src/eval/data.js';
import { syntheticRecords } from '../src/sim/synthetic.js';

/** ProcessBench records when the shared data is present (gsm8k + math), else synthetic ones of similar size. */
export function benchRecords(n: number): { records: TraceRecord[]; source: string } {
  const dir = sharedDataDir();
  if (dir) {
    const all = [...loadProcessBench(join(dir, 'processbench/gsm8k.json')), ...loadProcessBench(join(dir, 'processbench/math.json'))];
    const records: TraceRecord[] = [];
    for (let i = 0; records.length < n; i++) records.push({ ...all[i % all.length]!, id: `${all[i % all.length]!.id}#${Math.floor(i / all.length)}` });
    return { records, source: 'ProcessBench gsm8k+math' };
  }
  return { records: syntheticRecords(n, { seed: 7, wordsPerStep: 30 }), source: 'synthetic (ProcessBench data not found)' };
}

export function machine(): string {
  return `Node ${process.version}, ${process.platform}/${process.arch}`;
}

export function fmt(n: number, digits = 2): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

/** The middle value, or the mean of the two middle ones; NaN for none. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}
