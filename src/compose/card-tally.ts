/**
 * Row and part counts of an output's Parquet tables, summed from its commit manifests: what the
 * dataset card (./card-writer.ts) reports. Kept per manifest key and brought in line with the
 * `_commits/` listing before each card is written, so ranges other writers committed (ranks of
 * one split, Kafka workers) are counted and ranges retracted since (a changed input, `--rejudge`)
 * are not. Manifests it already holds are never read again.
 */
import { CommitManifest, FILTER_DECISIONS, type FilterDecision } from '../../schemas/outputs.js';
import type { CardCorpus, CardTable, CardTableName } from '../pipeline/commit/dataset-card.js';
import { COMMITS_PREFIX, manifestKey } from '../pipeline/commit/layout.js';
import type { ObjectStore } from '../pipeline/storage/object-store.js';

type TableName = CardTable['name'];

interface RangeCount {
  tables: Map<TableName, { rows: number; parts: number }>;
  corpus: CardCorpus;
}

const noDecisions = (): Record<FilterDecision, number> => Object.fromEntries(FILTER_DECISIONS.map((d) => [d, 0])) as Record<FilterDecision, number>;

const CORPUS_DECISION = /^corpus\/decision=([a-z]+)\//;

/** What one range adds: its Parquet parts only (the Arrow and JSONL copies are not the loader's). */
function countOf(m: CommitManifest): RangeCount {
  const count: RangeCount = { tables: new Map(), corpus: { rows: noDecisions(), parts: 0 } };
  for (const f of m.files) {
    if (f.format !== 'parquet' || f.table === 'reviews') continue;
    if (f.table === 'corpus') {
      const decision = CORPUS_DECISION.exec(f.key)?.[1] as FilterDecision | undefined;
      if (decision && decision in count.corpus.rows) count.corpus.rows[decision] += f.rows;
      count.corpus.parts += 1;
      continue;
    }
    const t = count.tables.get(f.table) ?? { rows: 0, parts: 0 };
    count.tables.set(f.table, { rows: t.rows + f.rows, parts: t.parts + 1 });
  }
  return count;
}

export interface TallyTotals {
  ranges: number;
  tables: Map<TableName, { rows: number; parts: number }>;
  corpus: CardCorpus;
  /** tables with at least one committed Parquet part */
  present: Set<CardTableName>;
}

export class CardTally {
  private readonly ranges = new Map<string, RangeCount>();

  /** `seed`: manifests the command already read (resume's OutputState), so they are not fetched again. */
  constructor(seed: Iterable<CommitManifest> = []) {
    for (const m of seed) this.add(m);
  }

  add(m: CommitManifest): void {
    this.ranges.set(manifestKey(m.first, m.last), countOf(m));
  }

  /** Drops ranges whose manifest is gone and reads the ones not seen yet. */
  async sync(store: ObjectStore): Promise<void> {
    const keys = new Set((await store.list(COMMITS_PREFIX)).filter((k) => k.endsWith('.json')));
    for (const k of this.ranges.keys()) if (!keys.has(k)) this.ranges.delete(k);
    for (const k of keys) {
      if (this.ranges.has(k)) continue;
      const bytes = await store.get(k);
      if (bytes) this.ranges.set(k, countOf(CommitManifest.parse(JSON.parse(new TextDecoder().decode(bytes)))));
    }
  }

  totals(): TallyTotals {
    const out: TallyTotals = { ranges: this.ranges.size, tables: new Map(), corpus: { rows: noDecisions(), parts: 0 }, present: new Set() };
    for (const r of this.ranges.values()) {
      for (const [name, t] of r.tables) {
        const sum = out.tables.get(name) ?? { rows: 0, parts: 0 };
        out.tables.set(name, { rows: sum.rows + t.rows, parts: sum.parts + t.parts });
        out.present.add(name);
      }
      for (const d of FILTER_DECISIONS) out.corpus.rows[d] += r.corpus.rows[d];
      out.corpus.parts += r.corpus.parts;
      if (r.corpus.parts > 0) out.present.add('corpus');
    }
    return out;
  }
}
