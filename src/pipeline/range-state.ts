/**
 * The states of one range, from its first record to its commit, and every transition between
 * them in one table (after the Kafka Connect S3 sink's partition writer):
 *
 *   open ─► complete ─► checking ─► cleared ─► published ─► staged ─► manifest_written ─► committed
 *    │          │            ├─► existing                  │           │
 *    └──────────┴─► dropped  └─► refused                   └───────────┴─► existing
 *
 *   complete          every record of the closed range has finished; it waits its turn to commit
 *   dropped           its unit was revoked (a Kafka partition moved) before the commit began
 *   checking          the commit began: its manifest is looked for, the streaming source asked
 *   existing          a manifest was there already (a restart), or a racer's was created first
 *   refused           the streaming source said not to write it (skipped | conflicted)
 *   cleared/published the sinks are publishing its rows / have published them
 *   staged            its parts are under _staging/, invisible to readers
 *   manifest_written  the commit point: the range is committed, its parts not yet moved
 *   committed         its parts are at their names
 *
 * What a crash leaves in each state, and what the next run does (docs/layout.md):
 *   open .. cleared           nothing written; the records are read and judged again
 *   published                 the sinks' events only; published again with the range
 *   staged                    parts under _staging/, invisible; removed by `recover`, written anew
 *   manifest_written          the range is committed; the next commit or `recover` moves its parts
 *   committed                 done; a streaming source that was not yet told re-reads and finds it existing
 */
import type { RangeOutcome } from './source.js';

export const RangeState = {
  Open: 'open',
  Complete: 'complete',
  Checking: 'checking',
  Dropped: 'dropped',
  Cleared: 'cleared',
  Published: 'published',
  Staged: 'staged',
  ManifestWritten: 'manifest_written',
  Committed: 'committed',
  Existing: 'existing',
  Refused: 'refused',
} as const;
export type RangeState = (typeof RangeState)[keyof typeof RangeState];

const S = RangeState;

/** Where each state may go next; a state with none is final. */
export const RANGE_TRANSITIONS: Readonly<Record<RangeState, readonly RangeState[]>> = {
  [S.Open]: [S.Complete, S.Dropped],
  [S.Complete]: [S.Checking, S.Dropped],
  // Once its commit has begun, a range is no longer dropped: the protocol decides its outcome.
  [S.Checking]: [S.Existing, S.Refused, S.Cleared],
  [S.Cleared]: [S.Published],
  // The committer looks for a manifest once more before staging, and again when its own loses.
  [S.Published]: [S.Staged, S.Existing],
  [S.Staged]: [S.ManifestWritten, S.Existing],
  [S.ManifestWritten]: [S.Committed],
  [S.Committed]: [],
  [S.Existing]: [],
  [S.Refused]: [],
  [S.Dropped]: [],
};

/** Told of every state a range enters (tests stop a commit there, as a crash would). */
export type StateObserver = (state: RangeState) => void;

/** One range's current state; every change goes through `to`, which allows only the table's transitions. */
export class RangeLifecycle {
  private current: RangeState = S.Open;
  private refusal: 'skipped' | 'conflicted' | null = null;

  constructor(
    /** names the range in an error */
    private readonly label: () => string,
    private readonly observe?: StateObserver,
  ) {}

  get state(): RangeState {
    return this.current;
  }

  can(next: RangeState): boolean {
    return RANGE_TRANSITIONS[this.current].includes(next);
  }

  to(next: RangeState): void {
    if (!this.can(next)) throw new Error(`range ${this.label()} cannot go from ${this.current} to ${next}`);
    this.current = next;
    this.observe?.(next);
  }

  /** The streaming source said not to write the range. */
  refuse(outcome: 'skipped' | 'conflicted'): void {
    this.refusal = outcome;
    this.to(S.Refused);
  }

  /** How the commit protocol ended, once it has. */
  get outcome(): RangeOutcome | null {
    if (this.current === S.Committed || this.current === S.Existing) return this.current;
    return this.current === S.Refused ? this.refusal : null;
  }
}
