import type { TranscriptTurn } from '../../../schemas/verdict.js';
import { frameBlock } from '../../prompts/frame.js';
import { DELIB_BLOCK, renderState, type TurnRenderer } from './render.js';
import { EMPTY_STATE, type ConsensusItem, type ConsensusState } from './schemas.js';

/**
 * The moderator's view of a deliberation as one append-only log: panel turns interleaved with
 * what each of its decisions changed in the consensus state.
 *
 * Why not hand the moderator its whole previous state each turn (App. C.2)? That state is the
 * previous call's output, so it is new to the server on every call and, placed after the
 * growing transcript, it was over half of all prompt tokens a prefix cache could not serve.
 * Here a decision's prompt is the previous decision's prompt plus two small entries (the items
 * the previous decision changed, the turn since), so vLLM / SGLang reuse everything else.
 * The moderator still gets its full previous state, as a base state plus changes in order; it
 * still returns the whole state every time, and that output stays the loop's authority.
 */

export type JournalEntry = { kind: 'turn'; turn: TranscriptTurn } | { kind: 'state'; state: ConsensusState; changes: StateChanges; decision: number };

export interface JournalView {
  /** the rendered log: base state, then entries */
  text: string;
  /** turns before the window, known to the moderator only through the base state */
  hiddenTurns: number;
}

const itemKey = (it: ConsensusItem) => JSON.stringify(it);

/** Who backs and who disputes an item: the part of an item most turns change. */
type Support = Pick<ConsensusItem, 'consensus_id' | 'source_ref' | 'judge_count' | 'contested_by'>;
const support = (it: ConsensusItem): Support => ({ consensus_id: it.consensus_id, source_ref: it.source_ref, judge_count: it.judge_count, contested_by: it.contested_by });
const withoutSupport = (it: ConsensusItem) => JSON.stringify({ ...it, source_ref: null, judge_count: null, contested_by: null });

export interface StateChanges {
  /** new items, and items whose wording, steps, severity or evidence changed: in full */
  changed: ConsensusItem[];
  /** items whose only change is who supports or disputes them: just those fields */
  support: Support[];
  dropped: string[];
}

/** What a decision changed, by `consensus_id`: small when a turn only moved support around. */
export function stateChanges(before: ConsensusState, after: ConsensusState): StateChanges {
  const old = new Map(before.consensus_map.map((it) => [it.consensus_id, it]));
  const now = new Set(after.consensus_map.map((it) => it.consensus_id));
  const c: StateChanges = { changed: [], support: [], dropped: before.consensus_map.map((it) => it.consensus_id).filter((id) => !now.has(id)) };
  for (const it of after.consensus_map) {
    const was = old.get(it.consensus_id);
    if (was && itemKey(was) === itemKey(it)) continue;
    if (was && withoutSupport(was) === withoutSupport(it)) c.support.push(support(it));
    else c.changed.push(it);
  }
  return c;
}

const isEmpty = (c: StateChanges) => c.changed.length + c.support.length + c.dropped.length === 0;

export class Journal {
  readonly entries: JournalEntry[] = [];
  private latest: ConsensusState = EMPTY_STATE;
  /** index of the first entry the moderator's window shows; moves forward only */
  private start = 0;
  private readonly rendered = new Map<JournalEntry, string>();

  constructor(private readonly turns: TurnRenderer) {}

  get state(): ConsensusState {
    return this.latest;
  }

  addTurn(turn: TranscriptTurn): void {
    this.entries.push({ kind: 'turn', turn });
  }

  /** A decision's state; one that changed nothing leaves no entry (nothing new to show). */
  addState(state: ConsensusState, decision: number): void {
    const changes = stateChanges(this.latest, state);
    this.latest = state;
    if (!isEmpty(changes)) this.entries.push({ kind: 'state', state, changes, decision });
  }

  /**
   * The moderator's view, holding at most `window` turns (the paper's recent-transcript
   * window). The view grows append-only; when it would exceed the window it restarts from the
   * state at that point with the latest half-window of turns, so a server's cache is broken
   * once per half window rather than on every call, as a sliding window would.
   */
  moderatorView(window: number): JournalView {
    const turnAt = this.entries.flatMap((e, i) => (e.kind === 'turn' ? [i] : []));
    const shown = turnAt.filter((i) => i >= this.start).length;
    if (shown > window) this.start = turnAt[turnAt.length - Math.max(1, Math.ceil(window / 2))]!;
    return { text: this.render(this.start), hiddenTurns: turnAt.filter((i) => i < this.start).length };
  }

  /** Everything from the start: what the final extraction reads. */
  fullView(): string {
    return this.render(0);
  }

  private render(from: number): string {
    let base = EMPTY_STATE;
    for (const e of this.entries.slice(0, from)) if (e.kind === 'state') base = e.state;
    const parts = [`### Your consensus state at this point\n${renderState(base)}`];
    for (const e of this.entries.slice(from)) parts.push(this.entry(e));
    return parts.join('\n\n');
  }

  /** An entry renders the same wherever it stands after the base, so it is framed once. */
  private entry(e: JournalEntry): string {
    if (e.kind === 'turn') return this.turns.one(e.turn);
    let s = this.rendered.get(e);
    if (s === undefined) {
      s = `### Your changes to the consensus state at decision ${e.decision}\n${frameBlock(DELIB_BLOCK.changes, JSON.stringify(e.changes))}`;
      this.rendered.set(e, s);
    }
    return s;
  }
}
