import type { TranscriptTurn } from '../../../schemas/verdict.js';
import { renderPanel, type PanelEntry } from '../../prompts/build.js';
import { DELIB_BLOCK } from '../../prompts/deliberation-wire.js';
import { frameBlock } from '../../prompts/frame.js';
import type { ConsensusState } from './schemas.js';

// The block labels live in the prompt layer, where the simulator reads them too.
export { DELIB_BLOCK };

/** Shown where a list has no entries yet (data, not wording). */
export const NONE = '(none)';

/** Each juror's Phase 1 findings as its opening statement, in the configured juror order. */
export function renderOpenings(panel: readonly PanelEntry[]): string {
  return panel.map((p) => `### ${p.juror_id}\n${frameBlock(DELIB_BLOCK.opening, renderPanel([p]))}`).join('\n\n');
}

export function turnHeader(t: Pick<TranscriptTurn, 'turn' | 'round' | 'speaker'>): string {
  return `### Turn ${t.turn}, round ${t.round}: ${t.speaker}`;
}

/**
 * Renders turns and remembers each rendering, so a record's prompts re-frame (and re-hash)
 * a turn once rather than once per later call.
 */
export class TurnRenderer {
  private readonly done = new Map<TranscriptTurn, string>();

  one(t: TranscriptTurn): string {
    let s = this.done.get(t);
    if (s === undefined) {
      s = `${turnHeader(t)}\n${frameBlock(DELIB_BLOCK.turn, t.message)}`;
      this.done.set(t, s);
    }
    return s;
  }

  all(turns: readonly TranscriptTurn[]): string {
    return turns.length === 0 ? NONE : turns.map((t) => this.one(t)).join('\n\n');
  }
}

/** Compact JSON: the moderator's base state (journal.ts) and the extraction read it. */
export function renderState(state: ConsensusState): string {
  return frameBlock(DELIB_BLOCK.state, JSON.stringify(state));
}

export function listIds(ids: readonly string[]): string {
  return ids.length === 0 ? NONE : ids.join(', ');
}
