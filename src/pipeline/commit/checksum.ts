import { createHash } from 'node:crypto';
import type { ShardFileEntry } from '../../../schemas/outputs.js';

/**
 * The hashes a commit manifest records. Their own module so readers of manifests (shards list,
 * verify) do not load the shard encoders (Arrow, parquet-wasm) to check a checksum.
 */
export const sha256Hex = (b: Uint8Array | string): string => createHash('sha256').update(b).digest('hex');

/** One checksum for a range's content, independent of commit time. */
export function filesChecksum(files: readonly Pick<ShardFileEntry, 'key' | 'sha256'>[]): string {
  const lines = files.map((f) => `${f.key} ${f.sha256}\n`).sort();
  return sha256Hex(lines.join(''));
}

/** JSON with every object's keys in sorted order: the same bytes for the same values, whoever wrote them. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * The manifest's seal: sha256 over every field but the seal itself (rows, record_ids, range
 * and its usage, settings, staging, extra, the file list), so an edit of any of them shows.
 * `checksum` stays what it was, the content of the files alone, to compare ranges by.
 */
export function manifestSeal(manifest: object): string {
  const { seal: _seal, ...fields } = manifest as { seal?: unknown };
  return sha256Hex(canonicalJson(fields));
}
