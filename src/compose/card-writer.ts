/**
 * Keeps an output's dataset card (`README.md`, src/pipeline/commit/dataset-card.ts) current: the
 * command writes it once at start (so an output with no record yet loads too) and the range
 * committer queues a rewrite after every range it commits (ShardCommitter `afterCommit`).
 *
 * The card is a summary; the manifests are the record. So a card write never blocks or fails a
 * commit: rewrites run one at a time behind the commits (a burst of commits becomes one
 * rewrite), and a write that fails after the store's own retries is one warning line, after
 * which the command goes on and the next commit tries again. The command awaits `flush()`
 * before it lets go of the output's lease, so no card is written by a writer that left.
 */
import { SHARD_TABLE_NAMES, type CommitManifest } from '../../schemas/outputs.js';
import { CARD_KEY, renderDatasetCard, schemaPartKey, type CardFacts, type CardTable, type CardTableName } from '../pipeline/commit/dataset-card.js';
import { schemaPart } from '../pipeline/commit/schema-part.js';
import type { ObjectStore } from '../pipeline/storage/object-store.js';
import { logger } from '../util/log.js';
import { CardTally } from './card-tally.js';

/** What the card says that the manifests do not: who judged, under which policy. */
export type CardStatic = Omit<CardFacts, 'ranges' | 'tables' | 'corpus'>;

export interface CardWriterOptions {
  store: ObjectStore;
  /** the output, for the warning line */
  location: string;
  /** the Parquet tables this command writes, offered before their first part exists (in SHARD_TABLE_NAMES order) */
  tables: readonly CardTable['name'][];
  /** this command writes a Parquet corpus */
  corpus: boolean;
  facts: CardStatic;
  /** manifests the command already read at start */
  seed?: Iterable<CommitManifest>;
}

export class CardWriter {
  private readonly tally: CardTally;
  private chain: Promise<void> = Promise.resolve();
  private queued = false;
  private written: string | null = null;
  /** schema parts put by this process: each is written once */
  private readonly schemaParts = new Set<CardTableName>();
  /** schema parts removed (or found absent) by this process, their table having parts */
  private readonly dropped = new Set<CardTableName>();
  private failing = false;

  constructor(private readonly opts: CardWriterOptions) {
    this.tally = new CardTally(opts.seed);
  }

  /** ShardCommitter's `afterCommit`: counts the range and queues a rewrite; never throws or waits. */
  readonly committed = (manifest: CommitManifest): void => {
    this.tally.add(manifest);
    this.update();
  };

  /** Queues a rewrite unless one is already waiting (it will see everything committed by then). */
  update(): void {
    if (this.queued) return;
    this.queued = true;
    this.chain = this.chain.then(async () => {
      this.queued = false;
      await this.write().catch((err: unknown) => this.failed(err));
    });
  }

  /** Settles once every queued rewrite is done (or has warned). */
  flush(): Promise<void> {
    return this.chain;
  }

  private async write(): Promise<void> {
    await this.tally.sync(this.opts.store);
    const facts = this.facts();
    if (!facts) return; // no Parquet at all (`--format arrow` and no Parquet corpus): nothing to load
    const text = renderDatasetCard(facts);
    if (text === this.written) return;
    // The schema parts first: the card never names a file that is not there.
    for (const t of tablesWhere(facts, (parts) => parts === 0)) {
      if (this.schemaParts.has(t)) continue;
      await this.opts.store.putObject(schemaPartKey(t), schemaPart(t));
      this.schemaParts.add(t);
    }
    await this.opts.store.putObject(CARD_KEY, new TextEncoder().encode(text));
    this.written = text;
    await this.dropSchemaParts(facts);
    if (this.failing) logger('card').info(`the dataset card ${this.opts.store.locate(CARD_KEY)} is written again`);
    this.failing = false;
  }

  /**
   * Once a table has parts the card no longer names its schema part: removed (after the card, so
   * no card ever names a missing file), once per process, so a `**` glob does not meet it either.
   */
  private async dropSchemaParts(facts: CardFacts): Promise<void> {
    for (const t of tablesWhere(facts, (parts) => parts > 0)) {
      if (this.dropped.has(t)) continue;
      await this.opts.store.delete?.(schemaPartKey(t));
      this.dropped.add(t);
      this.schemaParts.delete(t);
    }
  }

  private facts(): CardFacts | null {
    const totals = this.tally.totals();
    const names = new Set<CardTableName>([...this.opts.tables, ...totals.present]);
    const tables: CardTable[] = [];
    for (const name of names) {
      if (name === 'corpus') continue;
      const t = totals.tables.get(name) ?? { rows: 0, parts: 0 };
      tables.push({ name, rows: t.rows, parts: t.parts });
    }
    const corpus = this.opts.corpus || totals.present.has('corpus');
    if (tables.length === 0 && !corpus) return null;
    return { ...this.opts.facts, ranges: totals.ranges, tables: sortTables(tables), ...(corpus ? { corpus: totals.corpus } : {}) };
  }

  /** One warning per run of failures: a store that stays broken does not flood the log. */
  private failed(err: unknown): void {
    if (this.failing) return;
    this.failing = true;
    const msg = err instanceof Error ? err.message : String(err);
    logger('card').warn(`the dataset card ${this.opts.location.replace(/\/+$/, '')}/${CARD_KEY} was not written (${msg}); the committed ranges are not affected, the next commit tries again`);
  }
}

/** The card's tables (the corpus included) whose count of committed parts passes `test`. */
function tablesWhere(facts: CardFacts, test: (parts: number) => boolean): CardTableName[] {
  const names: CardTableName[] = facts.tables.filter((t) => test(t.parts)).map((t) => t.name);
  return facts.corpus && test(facts.corpus.parts) ? [...names, 'corpus'] : names;
}

/** The order of schemas/outputs.ts, the one docs/tables.md lists the tables in. */
const sortTables = (tables: CardTable[]): CardTable[] => tables.sort((a, b) => SHARD_TABLE_NAMES.indexOf(a.name) - SHARD_TABLE_NAMES.indexOf(b.name));
