// The range's states (src/pipeline/range-state.ts) on a real output folder: the table allows
// only its transitions, a commit walks them in order, and a crash in any state of the commit
// path (the commit stops there and is never resumed, as when the process dies) followed by the
// next run's recovery leaves the range committed exactly once.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DeadLetterRow } from '../../schemas/outputs.js';
import { LocalObjectStore } from '../../src/pipeline/storage/object-store.js';
import { unitToken, positionString } from '../../src/pipeline/positions.js';
import { commitRange, type RangeCommitDeps } from '../../src/pipeline/range-commit.js';
import type { PlannedRange } from '../../src/pipeline/range-planner.js';
import { RANGE_TRANSITIONS, RangeLifecycle, RangeState } from '../../src/pipeline/range-state.js';
import { RangeWriter } from '../../src/pipeline/range-writer.js';
import { listCommitted, ShardCommitter, verifyCommitted } from '../../src/pipeline/commit/shard-commit.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import type { CommitRequest } from '../../src/pipeline/sink.js';
import type { Clearance, RangeOutcome, Source } from '../../src/pipeline/source.js';
import { lineLogger } from '../../src/util/log.js';
import { tempDir } from '../helpers/run-setup.js';

const UNIT = 'in.jsonl';
const TOKEN = unitToken({ source: 'file', unit: UNIT });
const OFFSETS = [0, 1, 2, 3, 4];
const SETTINGS = { max_records: 5, max_chars: 1 << 30, formats: ['parquet' as const] };
const plan = (): PlannedRange => ({ id: 0, unit: UNIT, unitToken: TOKEN, firstOffset: 0, lastOffset: 4, items: OFFSETS.length, chars: 0, closed: true });
const deadRow = (o: number): DeadLetterRow => ({ source: 'file', source_unit: UNIT, source_offset: o, error: `bad row ${o}`, raw: `{"row":${o}}`, raw_truncated: false });

class Crash extends Error {}

/** A writer of the test's range, told of each state it enters; `crashAt` throws there, as a dying process stops there. */
function writer(states: RangeState[], crashAt?: RangeState): RangeWriter {
  return new RangeWriter(plan(), 'file', (s) => {
    states.push(s);
    if (s === crashAt) throw new Crash(`crash at ${s}`);
  });
}

/** Every record of the range finishes (as dead letters), then the planner closes it. */
function fill(w: RangeWriter): void {
  for (const o of OFFSETS) {
    const position = { source: 'file', unit: UNIT, offset: o };
    w.add({ position, item: { position, ok: false, error: 'bad', rawText: '', rawTextTruncated: false }, dead: deadRow(o) });
  }
  w.close();
}

interface Harness {
  deps: RangeCommitDeps;
  published: string[];
  told: RangeOutcome[];
}

/** The commit's dependencies on the output folder `out`; a streaming source when `clearance` is given. */
function harness(out: string, clearance?: Clearance): Harness {
  const published: string[] = [];
  const told: RangeOutcome[] = [];
  const streaming = clearance && { attach: () => {}, clearance: async () => clearance, rangeDone: (r: { outcome: RangeOutcome }) => told.push(r.outcome), safeOffsets: () => [], acknowledge: async () => {} };
  const deps: RangeCommitDeps = {
    committer: new ShardCommitter(new LocalObjectStore(out)),
    source: (streaming ? { streaming } : {}) as unknown as Source,
    sinks: [{ publish: async (req: CommitRequest) => void published.push(`${req.first}..${req.last}`) }],
    settings: SETTINGS,
    log: lineLogger(() => undefined),
  };
  return { deps, published, told };
}

const COMMIT_PATH = [RangeState.Complete, RangeState.Checking, RangeState.Cleared, RangeState.Published, RangeState.Staged, RangeState.ManifestWritten, RangeState.Committed];

describe('range states', () => {
  it('the table: every state reachable from open, final states have no way out, other moves refused', () => {
    const reached = new Set<RangeState>([RangeState.Open]);
    for (let grew = true; grew; ) {
      grew = false;
      for (const s of [...reached]) for (const n of RANGE_TRANSITIONS[s]) if (!reached.has(n)) (reached.add(n), (grew = true));
    }
    expect([...reached].sort()).toEqual(Object.values(RangeState).sort());
    const finals = Object.values(RangeState).filter((s) => RANGE_TRANSITIONS[s].length === 0);
    expect(finals.sort()).toEqual(['committed', 'dropped', 'existing', 'refused']);
    const life = new RangeLifecycle(() => 'r');
    expect(() => life.to(RangeState.Committed)).toThrow('range r cannot go from open to committed');
    life.to(RangeState.Complete);
    life.to(RangeState.Checking);
    expect(life.can(RangeState.Dropped)).toBe(false); // a range whose commit began is not dropped
    expect(life.outcome).toBeNull();
  });

  it('a commit walks open -> complete -> checking -> cleared -> published -> staged -> manifest_written -> committed; again: existing', async () => {
    const out = join(tempDir('range-state'), 'out');
    const { deps, published } = harness(out);
    const states: RangeState[] = [];
    const w = writer(states);
    expect(w.state).toBe(RangeState.Open);
    fill(w);
    expect(await commitRange(w, deps)).toBe('committed');
    expect(states).toEqual(COMMIT_PATH);
    expect(published).toHaveLength(1);

    const again: RangeState[] = [];
    const w2 = writer(again);
    fill(w2);
    expect(await commitRange(w2, deps)).toBe('existing');
    expect(again).toEqual([RangeState.Complete, RangeState.Checking, RangeState.Existing]);
    expect(await listCommitted(deps.committer.store)).toHaveLength(1);
  });

  it('refused by a streaming source: nothing written, the source told the refusal', async () => {
    const out = join(tempDir('range-state'), 'out');
    const { deps, published, told } = harness(out, { write: false, outcome: 'conflicted', reason: 'another writer owns these records' });
    const states: RangeState[] = [];
    const w = writer(states);
    fill(w);
    expect(await commitRange(w, deps)).toBe('conflicted');
    expect(states).toEqual([RangeState.Complete, RangeState.Checking, RangeState.Refused]);
    expect(told).toEqual(['conflicted']);
    expect(published).toEqual([]);
    expect(await listCommitted(deps.committer.store)).toEqual([]);
  });

  it('dropped when its unit is revoked while open or complete, not once its commit began', () => {
    const open = writer([]);
    expect(open.drop()).toBe(true);
    expect(open.state).toBe(RangeState.Dropped);
    const complete = writer([]);
    fill(complete);
    expect(complete.drop()).toBe(true);
    const committing = writer([]);
    fill(committing);
    committing.lifecycle.to(RangeState.Checking);
    expect(committing.drop()).toBe(false);
    expect(committing.state).toBe(RangeState.Checking);
  });

  describe('a crash in each state, then the next run: the range exactly once', () => {
    for (const crashAt of [RangeState.Open, ...COMMIT_PATH]) {
      it(crashAt, async () => {
        const out = join(tempDir('range-crash'), 'out');
        const first = harness(out, { write: true });
        const states: RangeState[] = [];
        const w = writer(states, crashAt);
        // Crashing while open: the process dies before the range's last record finished.
        if (crashAt !== RangeState.Open) {
          const crashed = (async () => {
            fill(w);
            await commitRange(w, first.deps);
          })();
          await expect(crashed).rejects.toBeInstanceOf(Crash);
          expect(states.at(-1)).toBe(crashAt);
        }
        expect(first.told).toEqual([]); // the source never heard of the range: it reads it again

        // The next run: recovery as a file run starts it, then the range rebuilt and committed.
        const next = harness(out, { write: true });
        await next.deps.committer.recover({ dropUnfinished: true });
        const w2 = writer([]);
        fill(w2);
        const outcome = await commitRange(w2, next.deps);
        const afterCommitPoint = crashAt === RangeState.ManifestWritten || crashAt === RangeState.Committed;
        expect(outcome).toBe(afterCommitPoint ? 'existing' : 'committed');
        expect(next.told).toEqual([outcome]);
        // Publications before the commit point are repeated, never skipped.
        expect(first.published.length + next.published.length).toBeGreaterThanOrEqual(1);

        const store = next.deps.committer.store;
        const manifests = await listCommitted(store);
        expect(manifests.map((m) => `${m.first}..${m.last}`)).toEqual([`${positionString(TOKEN, 0, 'file')}..${positionString(TOKEN, 4, 'file')}`]);
        expect(await verifyCommitted(store, manifests[0]!)).toEqual([]);
        const rows = await readCommittedRows(store, 'dead_letters');
        expect(rows.map((r) => Number(r.source_offset)).sort()).toEqual(OFFSETS);
        expect(await store.list('_staging/')).toEqual([]);
      });
    }
  });
});
