/**
 * Input identity: a committed range is tied to the content it was judged from, not only to
 * its file's path (docs/reading-shards.md, "Changed input").
 *
 * Every range's manifest records `content_sha256`, a hash over each record's offset and digest
 * (the line's bytes for JSONL, hashed by the connector as it reads; the row's JSON otherwise),
 * folded in offset order as records are assigned. A resumed file or S3 run still reads the
 * records of committed ranges (it skips judging them, not reading them), so it folds the same
 * hash over what it reads there and compares when the range's last record has passed:
 *
 *   equal       the range is what was judged: skipped, as before
 *   different   the input changed; `error` (the default) stops the run with one line naming the
 *               file and the records; `rejudge` retracts that range and every later range of the
 *               same file (later boundaries may have moved) and judges those records again.
 *
 * A retraction deletes the manifest first, then its files, and runs on the commit chain before
 * any new range of the run is written: a reader (or `shards list`) sees the old range, then
 * nothing, then the new one, never both. A crash in between leaves the records uncommitted,
 * so the next run judges them.
 */
import { createHash, type Hash } from 'node:crypto';
import type { ChangedInputPolicy } from '../../schemas/config.js';
import type { SourceItem } from './source.js';
import { ReasoningJuryError } from '../util/errors.js';

/** The record's digest: the connector's (bytes as read) when it has one, else its parsed value's JSON. */
export function itemDigest(item: SourceItem): string {
  if (item.digest !== undefined) return item.digest;
  const h = createHash('sha256');
  if (item.ok) h.update(JSON.stringify(item.raw, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)) ?? '');
  else h.update(`dead\0${item.error}\0${item.rawText}`);
  return h.digest('base64');
}

/** Folds one record into a range's content hash (offsets included: a moved record is a change). */
export function foldDigest(h: Hash, offset: number, digest: string): void {
  h.update(`${offset}:${digest}\n`);
}

export const newContentHash = (): Hash => createHash('sha256');

/** What the output recorded per unit: unit token -> first offset -> content hash and record count. */
export type CommittedContent = Map<string, Map<number, { sha256: string; records: number }>>;

export interface IdentityOptions {
  expected: CommittedContent;
  policy: ChangedInputPolicy;
  /** removes the unit's committed ranges from `fromFirst` on (manifest first, then its files) */
  retract(unitToken: string, fromFirst: number): Promise<void>;
}

/** Thrown (policy `error`) when a committed range's records are no longer what was judged. */
export class InputChangedError extends ReasoningJuryError {
  override get kind() {
    return 'input' as const;
  }
  constructor(readonly unit: string, what: string) {
    super(`input ${unit} changed since it was judged: ${what}; run with --on-changed-input rejudge to judge its changed ranges again, or write to another --out`);
    this.name = 'InputChangedError';
  }
}

/** One committed range being read past: its records so far and their hash. */
export interface SkipCheck<T> {
  unit: string;
  unitToken: string;
  first: number;
  last: number;
  expectedRecords: number;
  hash: Hash;
  seen: number;
  /** records held back (policy rejudge) until the range is known unchanged */
  held: T[];
}

/** What changed in a range, in words, or null when it did not. */
export function describeChange(c: SkipCheck<unknown>, expected: string): string | null {
  const got = c.hash.copy().digest('hex');
  if (got === expected) return null;
  const span = `records at offsets ${c.first}-${c.last}`;
  if (c.seen !== c.expectedRecords) return `${span} were ${c.expectedRecords} when committed, now ${c.seen} are read there`;
  return `${span} differ from the ones committed (content hash ${expected.slice(0, 12)}…, now ${got.slice(0, 12)}…)`;
}
