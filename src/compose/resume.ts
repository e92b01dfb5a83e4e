/**
 * What an output already holds, read from its commit manifests before a run starts: the ranges
 * a file or S3 run skips, and the range settings it must keep to plan the same ranges again.
 */
import { CommitManifest, type ManifestRange, type RangeSettings } from '../../schemas/outputs.js';
import type { ChangedInputPolicy } from '../../schemas/config.js';
import type { CommittedContent, IdentityOptions } from '../pipeline/input-identity.js';
import { COMMITS_PREFIX, manifestKey } from '../pipeline/commit/layout.js';
import type { ObjectStore } from '../pipeline/storage/object-store.js';
import { listCommitted } from '../pipeline/commit/shard-commit.js';
import { retractRange } from '../pipeline/commit/retract.js';
import type { RangeTableLog } from '../pipeline/commit/delta/range-table-log.js';
import type { CommittedRanges } from '../pipeline/source.js';
import { ReasoningJuryError } from '../util/errors.js';

export interface OutputState {
  ranges: CommittedRanges;
  records: number;
  manifests: number;
  /** content hash and record count of each committed range, by unit token and first offset */
  content: CommittedContent;
  /** the committed manifests by unit token, to retract a changed unit's ranges */
  byUnit: Map<string, CommitManifest[]>;
  /** usage summed over the committed ranges' manifests (what a budget counts as spent already) */
  spent: CommittedSpend;
  /** ranges retracted to be judged again (`--rejudge`): planned with their old boundaries */
  pinned?: CommittedRanges;
}

export interface CommittedSpend {
  tokens: number;
  usd: number;
  /** committed ranges whose manifest predates `range.usage`: their spend is unknown, counted 0 */
  unrecorded_ranges: number;
}

export const NO_SPEND: CommittedSpend = { tokens: 0, usd: 0, unrecorded_ranges: 0 };

/** Manifests written before ranges were typed kept the same facts in `extra`. */
export function rangeOf(m: CommitManifest): ManifestRange | null {
  if (m.range) return m.range;
  const e = m.extra as Partial<ManifestRange> | undefined;
  if (!e?.unit_token || e.first_offset === undefined || e.last_offset === undefined) return null;
  return { unit: e.unit ?? e.unit_token, unit_token: e.unit_token, first_offset: e.first_offset, last_offset: e.last_offset, records: e.records ?? 0 };
}

const describe = (s: RangeSettings) => `--range-records ${s.max_records} --range-mb ${+(s.max_chars / 1024 / 1024).toFixed(3)} --format ${s.formats.length > 1 ? 'both' : s.formats[0]}${s.corpus ? ` --corpus ${s.corpus}` : ''}`;

/** Thrown when the output was written with other range settings: resuming would rename ranges. */
export class RangeSettingsMismatch extends ReasoningJuryError {
  override get kind() {
    return 'input' as const;
  }
  constructor(location: string, found: RangeSettings, wanted: RangeSettings) {
    super(`${location} was written with ${describe(found)}, this run has ${describe(wanted)}: keep the same settings to resume, or use another --out`);
    this.name = 'RangeSettingsMismatch';
  }
}

function sameSettings(a: RangeSettings, b: RangeSettings): boolean {
  // Manifests from before the corpus existed say nothing about it: any corpus setting resumes them.
  const corpus = a.corpus === undefined || b.corpus === undefined || a.corpus === b.corpus;
  return a.max_records === b.max_records && a.max_chars === b.max_chars && [...a.formats].sort().join() === [...b.formats].sort().join() && corpus;
}

export function checkSettings(manifests: readonly CommitManifest[], wanted: RangeSettings, location: string): void {
  const other = manifests.find((m) => m.settings && !sameSettings(m.settings, wanted));
  if (other?.settings) throw new RangeSettingsMismatch(location, other.settings, wanted);
}

/** Every committed range of the output; throws RangeSettingsMismatch for other settings. */
export async function readOutputState(store: ObjectStore, wanted: RangeSettings, location: string): Promise<OutputState> {
  const manifests = await listCommitted(store);
  checkSettings(manifests, wanted, location);
  const ranges: CommittedRanges = new Map();
  const content: CommittedContent = new Map();
  const byUnit = new Map<string, CommitManifest[]>();
  let records = 0;
  const spent = { ...NO_SPEND };
  for (const m of manifests) {
    const r = rangeOf(m);
    if (!r) continue;
    if (!ranges.has(r.unit_token)) ranges.set(r.unit_token, new Map());
    ranges.get(r.unit_token)!.set(r.first_offset, r.last_offset);
    if (!byUnit.has(r.unit_token)) byUnit.set(r.unit_token, []);
    byUnit.get(r.unit_token)!.push(m);
    if (r.content_sha256) {
      if (!content.has(r.unit_token)) content.set(r.unit_token, new Map());
      content.get(r.unit_token)!.set(r.first_offset, { sha256: r.content_sha256, records: r.records });
    }
    records += r.records;
    if (r.usage) {
      spent.tokens += r.usage.tokens_in + r.usage.tokens_out;
      spent.usd += r.usage.cost_usd;
    } else spent.unrecorded_ranges += 1;
  }
  return { ranges, records, manifests: manifests.length, content, byUnit, spent };
}

/**
 * The stage's input-identity check over this output (src/pipeline/input-identity.ts). Retracting
 * deletes each manifest before its files, so no reader ever trusts a range with files missing.
 */
export function identityOptions(store: ObjectStore, state: OutputState, policy: ChangedInputPolicy, location: string, tables?: RangeTableLog): IdentityOptions {
  return {
    expected: state.content,
    policy,
    async retract(unitToken, fromFirst) {
      const del = store.delete?.bind(store);
      if (!del) throw new Error(`${location} cannot delete objects, so changed ranges cannot be retracted; use --on-changed-input error`);
      // Last range first: a crash part-way leaves the changed range committed, so the next run
      // finds the change again, rather than a gap before ranges whose boundaries may have moved.
      const doomed = (state.byUnit.get(unitToken) ?? []).filter((m) => (rangeOf(m)?.first_offset ?? -1) >= fromFirst);
      doomed.sort((a, b) => rangeOf(b)!.first_offset - rangeOf(a)!.first_offset);
      for (const m of doomed) await retractRange(del, m, tables);
    },
  };
}

/**
 * Kafka outputs can hold very many ranges and resume from the group's offsets; one manifest
 * (the last by key) is enough to catch a changed setting.
 */
export async function checkOneManifestSettings(store: ObjectStore, wanted: RangeSettings, location: string): Promise<void> {
  const keys = (await store.list(COMMITS_PREFIX)).filter((k) => k.endsWith('.json'));
  const last = keys.at(-1);
  const bytes = last ? await store.get(last) : null;
  if (bytes) checkSettings([CommitManifest.parse(JSON.parse(new TextDecoder().decode(bytes)))], wanted, location);
}
