import type { StateChanges } from '../../../src/jury/deliberation/journal.js';
import { DELIB_BLOCK } from '../../../src/jury/deliberation/render.js';
import type { ConsensusItem, ConsensusState } from '../../../src/jury/deliberation/schemas.js';
import { topLevelBlocks } from '../../../src/sim/blocks.js';

/**
 * An independent reading of a journal, the way the moderator's system prompt tells the model to
 * read it: the CONSENSUS STATE block, then every STATE CHANGES block applied in order.
 */
export function applyJournal(text: string): ConsensusState {
  const blocks = topLevelBlocks(text);
  let map: ConsensusItem[] = (JSON.parse(blocks.find((b) => b.label === DELIB_BLOCK.state)!.content) as ConsensusState).consensus_map;
  for (const b of blocks.filter((x) => x.label === DELIB_BLOCK.changes)) {
    const c = JSON.parse(b.content) as StateChanges;
    map = map.filter((it) => !c.dropped.includes(it.consensus_id));
    for (const it of c.changed) {
      const at = map.findIndex((x) => x.consensus_id === it.consensus_id);
      if (at >= 0) map[at] = it;
      else map.push(it);
    }
    for (const sup of c.support) map = map.map((it) => (it.consensus_id === sup.consensus_id ? { ...it, ...sup } : it));
  }
  return { consensus_map: map };
}
