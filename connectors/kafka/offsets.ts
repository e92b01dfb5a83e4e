/**
 * Which offsets of one partition are safely behind us, and so how far the group may commit.
 *
 * An offset is covered when a committed range (ours, or found as a manifest) holds it, or when
 * it holds no message a consumer can see (control records, aborted transactions, compaction).
 * The commit point is the first offset not covered: everything before it is in committed
 * shards, so committing it can never run ahead of the output. Ranges commit out of order;
 * the point only moves when the gap below it closes.
 */
export class CoveredOffsets {
  /** disjoint, sorted, non-adjacent [first, last] intervals above `next` */
  private spans: Array<[number, number]> = [];

  /** @param next first offset not known to be covered (the group's committed offset) */
  constructor(private nextOffset: number) {}

  /** The offset to commit: everything below it is covered. */
  get next(): number {
    return this.nextOffset;
  }

  /** Marks [first, last] covered and advances the commit point through any closed gap. */
  add(first: number, last: number): void {
    if (last < first || last < this.nextOffset) return;
    const a = Math.max(first, this.nextOffset);
    const merged: Array<[number, number]> = [];
    let lo = a;
    let hi = last;
    for (const s of this.spans) {
      if (s[1] + 1 < lo || s[0] > hi + 1) merged.push(s);
      else {
        lo = Math.min(lo, s[0]);
        hi = Math.max(hi, s[1]);
      }
    }
    merged.push([lo, hi]);
    merged.sort((x, y) => x[0] - y[0]);
    if (merged[0]![0] <= this.nextOffset) this.nextOffset = merged.shift()![1] + 1;
    this.spans = merged;
  }

  has(offset: number): boolean {
    if (offset < this.nextOffset) return true;
    return this.spans.some((s) => s[0] <= offset && offset <= s[1]);
  }

  /** For tests and logs. */
  get pending(): ReadonlyArray<readonly [number, number]> {
    return this.spans;
  }
}
