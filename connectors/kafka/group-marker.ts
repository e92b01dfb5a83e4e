/**
 * Which consumer group writes an output. Within one group the partition assignment says who
 * writes each partition's ranges; two groups on one output would both read every partition and
 * race on every range. So a Kafka run records its group under `_kafka/groups/<group>.json` and
 * refuses to write an output another group has recorded (unless told to, with a warning).
 *
 * One key per group, never overwritten: two groups starting at once both see each other and
 * both refuse (each removes the marker it had just written), rather than both going on.
 */
import type { ObjectStore } from '../../src/pipeline/storage/object-store.js';
import { ReasoningJuryError } from '../../src/util/errors.js';

export const GROUP_MARKERS_PREFIX = '_kafka/groups/';

const markerKey = (group: string): string => `${GROUP_MARKERS_PREFIX}${encodeURIComponent(group).replace(/%/g, '~')}.json`;

async function groupsIn(store: ObjectStore): Promise<string[]> {
  const out: string[] = [];
  for (const key of await store.list(GROUP_MARKERS_PREFIX)) {
    const bytes = await store.get(key);
    if (!bytes) continue;
    try {
      out.push(String((JSON.parse(new TextDecoder().decode(bytes)) as { group: unknown }).group));
    } catch {
      out.push(key); // unreadable: still someone else's mark
    }
  }
  return out;
}

export class OtherGroupError extends ReasoningJuryError {
  override get kind() {
    return 'usage' as const;
  }
  override name = 'OtherGroupError';
}

/**
 * Records `group` as a writer of the output at `location`. Another group already recorded
 * there: throws OtherGroupError (one line), or with `allowOther` returns the warning to log.
 */
export async function claimOutputForGroup(store: ObjectStore, location: string, group: string, topics: string[], allowOther: boolean): Promise<string | null> {
  const key = markerKey(group);
  const had = await store.exists(key);
  if (!had) await store.putObject(key, new TextEncoder().encode(`${JSON.stringify({ group, topics, since: new Date().toISOString() })}\n`));
  const others = (await groupsIn(store)).filter((g) => g !== group);
  if (others.length === 0) return null;
  const names = others.map((g) => `"${g}"`).join(', ');
  if (allowOther) return `${location} is also written by consumer group(s) ${names}; --allow-other-group given, so both groups read every partition and race on its ranges (nothing is lost or written twice, but judging is repeated)`;
  if (!had) await store.delete?.(key);
  throw new OtherGroupError(
    `${location} is written by consumer group ${names}, not "${group}": use that group, another --out, or --allow-other-group (if ${names} no longer writes here, delete its marker under ${location}/${GROUP_MARKERS_PREFIX})`,
  );
}
