/**
 * Commit manifests of one Kafka partition, found by key name alone (no GETs): their keys are
 * `_commits/<topic>+<partition>+<first, 19 digits>-<topic>+<partition>+<last, 19 digits>.json`,
 * so a prefix listing with StartAfter returns exactly the ranges at or after an offset.
 */
import { COMMITS_PREFIX } from '../../src/pipeline/commit/layout.js';
import { listKeysAfter, type ObjectStore } from '../../src/pipeline/storage/object-store.js';
import { positionString } from '../../src/pipeline/positions.js';

export interface OffsetRange {
  first: number;
  last: number;
  key: string;
}

const DIGITS = /^\d{19}$/;

/** Ranges committed for `unit` ("topic+partition") whose first offset is >= `from`, in order. */
export async function committedRangesFrom(store: ObjectStore, unit: string, from: number): Promise<OffsetRange[]> {
  const prefix = `${COMMITS_PREFIX}${unit}+`;
  const startAfter = `${COMMITS_PREFIX}${positionString(unit, Math.max(0, from), 'kafka')}`;
  const out: OffsetRange[] = [];
  for (const key of await listKeysAfter(store, prefix, startAfter)) {
    const r = parseRangeKey(key, unit);
    if (r && r.first >= from) out.push(r);
  }
  return out;
}

export function parseRangeKey(key: string, unit: string): OffsetRange | null {
  const head = `${COMMITS_PREFIX}${unit}+`;
  const mid = `-${unit}+`;
  if (!key.startsWith(head) || !key.endsWith('.json')) return null;
  const first = key.slice(head.length, head.length + 19);
  const rest = key.slice(head.length + 19, -'.json'.length);
  if (!DIGITS.test(first) || !rest.startsWith(mid)) return null;
  const last = rest.slice(mid.length);
  if (!DIGITS.test(last)) return null;
  return { first: Number(first), last: Number(last), key };
}
