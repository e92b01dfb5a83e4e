import type { TraceRecord } from '../../schemas/trace.js';
import type { SegmentationMode } from '../segment/index.js';
import { type GoldEntry, type GoldIndex, NO_GOLD, goldErrorSteps, goldKey, recordBlocks } from './gold.js';

/**
 * A gold index the pipeline fills as records stream past, so the embedded simulator can play
 * jurors of known accuracy on input that carries its own labels (the examples, benchmark
 * files) without a separate gold file. Only records with labels are kept; `forget` lets a
 * long run drop entries once judged so memory stays flat.
 */
export class LiveGoldIndex implements GoldIndex {
  private readonly entries = new Map<string, GoldEntry>();
  constructor(
    private readonly base: GoldIndex = NO_GOLD,
    private readonly mode: SegmentationMode = 'auto',
  ) {}

  get size(): number {
    return this.base.size + this.entries.size;
  }
  get skipped() {
    return this.base.skipped;
  }

  private key(rec: TraceRecord): { key: string; n: number } | null {
    try {
      const b = recordBlocks(rec, this.mode);
      return { key: goldKey(b.problem, b.trace), n: b.n_steps };
    } catch {
      return null; // unsegmentable records never reach a juror anyway
    }
  }

  add(rec: TraceRecord): void {
    if (!rec.gold) return;
    const k = this.key(rec);
    if (k) this.entries.set(k.key, { id: rec.id, n_steps: k.n, error_steps: goldErrorSteps(rec.gold, k.n) });
  }

  forget(rec: TraceRecord): void {
    if (!rec.gold) return;
    const k = this.key(rec);
    if (k) this.entries.delete(k.key);
  }

  lookup(problemBlock: string | null, traceBlock: string): GoldEntry | null {
    if (problemBlock !== null) {
      const hit = this.entries.get(goldKey(problemBlock, traceBlock));
      if (hit) return hit;
    }
    return this.base.lookup(problemBlock, traceBlock);
  }
}
