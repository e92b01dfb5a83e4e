/**
 * Splits each source unit (file, object, partition) into consecutive ranges of positions, the
 * unit of commit. Boundaries depend only on the input (record count and input size in offset
 * order), so a restarted run rebuilds exactly the ranges it did not commit, under the same
 * names. A range already committed (known by its first offset) is skipped whole.
 */
import type { CommittedRanges } from './source.js';

export interface RangeLimits {
  /** close a range after this many items */
  maxRecords: number;
  /** ... or once its items' input size reaches this many characters */
  maxChars: number;
  /**
   * Units arrive one after another (files): seeing a new unit closes the previous one. Kafka
   * partitions interleave, so their ranges close by size, on revocation or at the end.
   */
  sequentialUnits?: boolean;
  /**
   * Ranges judged again (`run --rejudge`), by unit token and first offset: planned with the
   * boundaries they were committed with, so they are committed again under the same names.
   */
  pinned?: CommittedRanges;
}

export interface PlannedRange {
  id: number;
  unit: string;
  unitToken: string;
  firstOffset: number;
  lastOffset: number;
  items: number;
  chars: number;
  closed: boolean;
}


interface UnitState {
  open: PlannedRange | null;
  /** inside a committed range: skip items up to this offset */
  skipUntil: number;
  /** first offset of that committed range */
  skipFrom: number;
  /** the open range is a pinned one: it ends at this offset, whatever the limits say */
  pinEnd: number | undefined;
}

/** A skipped item names the committed range it falls in (`first`..`last` offsets). */
export type Assignment = { skip: true; first: number; last: number } | { skip: false; range: PlannedRange };

export class RangePlanner {
  private nextId = 0;
  private readonly units = new Map<string, UnitState>();
  private lastUnit: string | null = null;

  constructor(
    private readonly limits: RangeLimits,
    private readonly committed: CommittedRanges = new Map(),
    private readonly onClose: (r: PlannedRange) => void = () => undefined,
  ) {
    if (limits.maxRecords < 1 || limits.maxChars < 1) throw new Error('range limits must be positive');
  }

  assign(unit: string, unitToken: string, offset: number, chars: number): Assignment {
    // Files are read one after another: a new unit means the previous one has ended.
    if (this.limits.sequentialUnits !== false && this.lastUnit !== null && this.lastUnit !== unitToken) this.closeUnit(this.lastUnit);
    this.lastUnit = unitToken;
    let st = this.units.get(unitToken);
    if (!st) this.units.set(unitToken, (st = { open: null, skipUntil: -1, skipFrom: -1, pinEnd: undefined }));
    if (offset <= st.skipUntil) return { skip: true, first: st.skipFrom, last: st.skipUntil };
    // An open range never runs into a committed or pinned range, nor past its own pinned end.
    if (st.open && (this.startsRange(unitToken, offset) || (st.pinEnd !== undefined && offset > st.pinEnd))) this.close(st);
    if (!st.open) {
      const doneUntil = this.committed.get(unitToken)?.get(offset);
      if (doneUntil !== undefined) {
        st.skipUntil = doneUntil;
        st.skipFrom = offset;
        return { skip: true, first: offset, last: doneUntil };
      }
      st.open = { id: this.nextId++, unit, unitToken, firstOffset: offset, lastOffset: offset, items: 0, chars: 0, closed: false };
      st.pinEnd = this.limits.pinned?.get(unitToken)?.get(offset);
    }
    const r = st.open;
    r.lastOffset = offset;
    r.items += 1;
    r.chars += chars;
    const full = st.pinEnd !== undefined ? offset >= st.pinEnd : r.items >= this.limits.maxRecords || r.chars >= this.limits.maxChars;
    if (full) this.close(st);
    return { skip: false, range: r };
  }

  private startsRange(token: string, offset: number): boolean {
    return this.committed.get(token)?.has(offset) === true || this.limits.pinned?.get(token)?.has(offset) === true;
  }

  private close(st: UnitState): void {
    const r = st.open;
    if (!r) return;
    st.open = null;
    st.pinEnd = undefined;
    r.closed = true;
    this.onClose(r);
  }

  private closeUnit(token: string): void {
    const st = this.units.get(token);
    if (st) this.close(st);
    // Units are not revisited by file sources; drop their state so memory stays flat.
    this.units.delete(token);
  }

  /** A unit ends early (a Kafka partition revoked): close its open range. */
  closeUnitNow(token: string): void {
    this.closeUnit(token);
    if (this.lastUnit === token) this.lastUnit = null;
  }

  /**
   * The unit's committed ranges from `fromFirst` on are no longer committed (its input changed
   * and they were retracted): their offsets are planned and judged like new ones.
   */
  uncommit(token: string, fromFirst: number): void {
    const ranges = this.committed.get(token);
    for (const first of [...(ranges?.keys() ?? [])]) if (first >= fromFirst) ranges!.delete(first);
    const st = this.units.get(token);
    if (st && st.skipFrom >= fromFirst) [st.skipUntil, st.skipFrom] = [-1, -1];
  }

  /** End of input: close whatever is open. */
  closeAll(): void {
    for (const token of [...this.units.keys()]) this.closeUnit(token);
    this.lastUnit = null;
  }
}
