/**
 * What an output already holds, read from its commit manifests before a run starts: the ranges
 * a file or S3 run skips, and the range settings it must keep to plan the same ranges again.
 */
import { CommitManifest, type ManifestRange, type RangeSettings } from '../../schemas/outputs.js';
import { COMMITS_PREFIX } from '../pipeline/layout.js';
import type { ObjectStore } from '../pipeline/object-store.js';
import { listCommitted } from '../pipeline/shard-commit.js';
import type { CommittedRanges } from '../pipeline/source.js';

export interface OutputState {
  ranges: CommittedRanges;
  records: number;
  manifests: number;
}

/** Manifests written before ranges were typed kept the same facts in `extra`. */
function rangeOf(m: CommitManifest): ManifestRange | null {
  if (m.range) return m.range;
  const e = m.extra as Partial<ManifestRange> | undefined;
  if (!e?.unit_token || e.first_offset === undefined || e.last_offset === undefined) return null;
  return { unit: e.unit ?? e.unit_token, unit_token: e.unit_token, first_offset: e.first_offset, last_offset: e.last_offset, records: e.records ?? 0 };
}

const describe = (s: RangeSettings) => `--range-records ${s.max_records} --range-mb ${+(s.max_chars / 1024 / 1024).toFixed(3)} --format ${s.formats.length > 1 ? 'both' : s.formats[0]}${s.corpus ? ` --corpus ${s.corpus}` : ''}`;

/** Thrown when the output was written with other range settings: resuming would rename ranges. */
export class RangeSettingsMismatch extends Error {
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
  let records = 0;
  for (const m of manifests) {
    const r = rangeOf(m);
    if (!r) continue;
    if (!ranges.has(r.unit_token)) ranges.set(r.unit_token, new Map());
    ranges.get(r.unit_token)!.set(r.first_offset, r.last_offset);
    records += r.records;
  }
  return { ranges, records, manifests: manifests.length };
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
