import { createHash } from 'node:crypto';
import type { ShardFileEntry } from '../../schemas/outputs.js';

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
