import { createHash } from 'node:crypto';
import type { SourcePosition } from '../../schemas/trace.js';

/**
 * Position strings name shards and manifests, so they must be deterministic and path-safe:
 *   Kafka:          <topic>+<partition>+<offset, 19 digits>   (as Kafka Connect's S3 sink)
 *   files / S3:     <10-hex hash of the path or key>+<row, 12 digits>
 * Zero padding makes lexical order equal numeric order within a unit.
 */
export function unitToken(p: Pick<SourcePosition, 'source' | 'unit'>): string {
  if (p.source === 'kafka' && /^[A-Za-z0-9._-]+\+\d+$/.test(p.unit)) return p.unit;
  return createHash('sha256').update(p.unit).digest('hex').slice(0, 10);
}

export function positionString(unitTok: string, offset: number, source: string): string {
  return `${unitTok}+${String(offset).padStart(source === 'kafka' ? 19 : 12, '0')}`;
}
