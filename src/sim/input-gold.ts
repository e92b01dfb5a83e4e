import type { TraceRecord } from '../../schemas/trace.js';
import type { SegmentationMode } from '../segment/index.js';
import { type GoldEntry, type GoldIndex, NO_GOLD, goldErrorSteps, goldKey, recordBlocks } from './gold.js';

/**
 * Gold taken from the records a command reads, so the simulator can play jurors of known
 * accuracy on input that carries its own labels (the bundled examples, benchmark exports)
 * without a separate gold file. The CLI fills it once, before the simulator serves a request.
 *
 * Only labelled records are kept, found by the exact key of their PROBLEM and REASONING TRACE
 * blocks; anything else is looked up in `base` (the --gold file). Two records with the same
 * problem and trace but different labels cannot be told apart from a prompt: the first wins.
 * An entry is a hash, an id and a step list, so 100k records stay within a few tens of MB.
 */
export class InputGoldIndex implements GoldIndex {
  private readonly entries = new Map<string, GoldEntry>();
  constructor(
    private readonly base: GoldIndex = NO_GOLD,
    /** must match the pipeline's segmentation mode, so the key matches the prompt's blocks */
    private readonly mode: SegmentationMode = 'auto',
  ) {}

  get size(): number {
    return this.base.size + this.entries.size;
  }
  get skipped() {
    return this.base.skipped;
  }

  add(rec: TraceRecord): void {
    if (!rec.gold && rec.reference_answer === undefined) return;
    let blocks: ReturnType<typeof recordBlocks>;
    try {
      blocks = recordBlocks(rec, this.mode);
    } catch {
      return; // unsegmentable records never reach a juror anyway
    }
    const key = goldKey(blocks.problem, blocks.trace);
    if (!this.entries.has(key)) this.entries.set(key, { id: rec.id, n_steps: blocks.n_steps, error_steps: goldErrorSteps(rec.gold, blocks.n_steps), ...(rec.reference_answer !== undefined ? { reference_answer: rec.reference_answer } : {}) });
  }

  lookup(problemBlock: string | null, traceBlock: string): GoldEntry | null {
    if (problemBlock !== null) {
      const hit = this.entries.get(goldKey(problemBlock, traceBlock));
      if (hit) return hit;
    }
    return this.base.lookup(problemBlock, traceBlock);
  }
}
