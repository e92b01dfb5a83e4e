/**
 * The output's dataset card (docs/layout.md, "The dataset card"): `README.md` at the output root,
 * whose YAML front matter (`configs:`) lets Hugging Face `datasets.load_dataset(OUT)` read the
 * curated corpus and `load_dataset(OUT, "<table>")` any Parquet table with no other argument.
 * Pure: facts in, text out; the facts are gathered and the file written in src/compose/card-writer.ts.
 *
 * Each config's `data_files` glob names the part files only, `<table>/source=*\/*.parquet` (the
 * corpus: `corpus/decision=*\/source=*\/*.parquet`), so what else lives under a table folder (a
 * Delta log's `_delta_log/*.checkpoint.parquet`) and the output's own folders (`_staging/`,
 * `_commits/`, `_lease/`, `arrow/`, `jsonl/`) never reach the loader.
 */
import { stringify } from 'yaml';
import { FILTER_DECISIONS, type FilterDecision, type ShardTableName } from '../../../schemas/outputs.js';

/** Where the card lives, relative to the output root. */
export const CARD_KEY = 'README.md';

/**
 * A zero-row Parquet file with a table's schema and no row group, listed by the card only while
 * the table has no committed part: `datasets` refuses a config whose globs match nothing
 * (DataFilesNotFoundError), and takes its columns from the first file it is given. No row group,
 * because `datasets` 5.2.0 reads a file's first row group size as its batch size and fails on 0.
 * The leading '_' keeps pyarrow.dataset and Spark out, and no table glob reaches `_card/`.
 */
export const schemaPartKey = (table: CardTableName): string => `_card/${table}.parquet`;

/** Tables the card offers: every shard table but `reviews` (an output of its own, docs/viewer.md). */
export type CardTableName = Exclude<ShardTableName, 'reviews'> | 'corpus';

export interface CardTable {
  name: Exclude<CardTableName, 'corpus'>;
  rows: number;
  /** committed Parquet parts; 0 lists the schema part instead (see schemaPartKey) */
  parts: number;
}

export interface CardCorpus {
  rows: Record<FilterDecision, number>;
  parts: number;
}

export interface CardSeat {
  role: string;
  id: string;
  model: string;
}

export interface CardJury {
  mode: string;
  seats: readonly CardSeat[];
  promptHash: string;
  configHash: string;
}

export interface CardPolicy {
  /** one line per rule, in order: `<name>: <decision> when <condition>` */
  rules: readonly string[];
  default: FilterDecision;
  hash: string;
}

export interface CardFacts {
  /** the command that writes the output */
  command: 'run' | 'decide';
  /** committed ranges (manifests under `_commits/`) */
  ranges: number;
  /** the Parquet tables, in the order of SHARD_TABLE_NAMES */
  tables: readonly CardTable[];
  /** the Parquet corpus; absent when the output has none (off, or `--corpus jsonl`) */
  corpus?: CardCorpus;
  /** absent for `decide`, whose verdicts come from another output (`decidedFrom`) */
  jury?: CardJury;
  decidedFrom?: string;
  policy?: CardPolicy;
}

interface DataFiles {
  split: string;
  path: string | string[];
}

interface CardConfig {
  config_name: string;
  default?: true;
  data_files: DataFiles[];
}

const withSchemaPart = (glob: string, table: CardTableName, parts: number): string | string[] => (parts > 0 ? glob : [glob, schemaPartKey(table)]);

/**
 * One config per table, the corpus first and the default. The corpus is one split, `train`,
 * with its `decision` column, not a split per decision: `datasets` 5.2.0 cannot load a split
 * with no rows ("Instruction ... corresponds to no data!"), and one decision without a record
 * would make all of `load_dataset(OUT)` fail.
 */
export function cardConfigs(facts: CardFacts): CardConfig[] {
  const configs: CardConfig[] = [];
  if (facts.corpus) configs.push({ config_name: 'corpus', data_files: [{ split: 'train', path: withSchemaPart('corpus/decision=*/source=*/*.parquet', 'corpus', facts.corpus.parts) }] });
  for (const t of facts.tables) configs.push({ config_name: t.name, data_files: [{ split: 'train', path: withSchemaPart(`${t.name}/source=*/*.parquet`, t.name, t.parts) }] });
  const first = configs[0];
  if (first) configs[0] = { config_name: first.config_name, default: true, data_files: first.data_files };
  return configs;
}

/** Markdown table cells: a `|` or a line break in a model name would break the row. */
const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');

const count = (n: number): string => n.toLocaleString('en-US');

function contentsSection(facts: CardFacts): string[] {
  const lines = ['## Contents', '', `${count(facts.ranges)} committed range(s). Rows per config:`, '', '| config | rows | parts |', '| --- | --- | --- |'];
  if (facts.corpus) {
    const total = FILTER_DECISIONS.reduce((a, d) => a + facts.corpus!.rows[d], 0);
    lines.push(`| corpus (default) | ${count(total)} (${FILTER_DECISIONS.map((d) => `${d} ${count(facts.corpus!.rows[d])}`).join(', ')}) | ${count(facts.corpus.parts)} |`);
  }
  for (const t of facts.tables) lines.push(`| ${t.name} | ${count(t.rows)} | ${count(t.parts)} |`);
  return lines;
}

function jurySection(facts: CardFacts): string[] {
  if (!facts.jury) return ['## Jury', '', `The verdicts were judged in ${cell(facts.decidedFrom ?? 'another output')}; its README.md names the jury and the prompt hash. This output holds the decisions (and corpus) of another policy.`];
  const j = facts.jury;
  return [
    '## Jury',
    '',
    `Mode \`${j.mode}\`, prompt hash \`${j.promptHash}\`, config hash \`${j.configHash}\` (the \`prompt_hash\` and \`config_hash\` columns of \`verdicts\`).`,
    '',
    '| role | seat | model |',
    '| --- | --- | --- |',
    ...j.seats.map((s) => `| ${cell(s.role)} | ${cell(s.id)} | ${cell(s.model)} |`),
  ];
}

function policySection(facts: CardFacts): string[] {
  if (!facts.policy) return [];
  const p = facts.policy;
  return ['', '## Decision policy', '', `The first rule whose condition holds decides; a record no rule matches gets \`${p.default}\` (policy hash \`${p.hash}\`):`, '', ...p.rules.map((r, i) => `${i + 1}. ${r.replace(/\s*\n\s*/g, ' ')}`)];
}

function loadingSection(facts: CardFacts): string[] {
  const [def, other] = cardConfigs(facts).map((c) => c.config_name);
  const example = facts.corpus
    ? ['corpus = load_dataset("path/to/this/folder", split="train")   # the curated corpus, one row per judged record', 'keep = corpus.filter(lambda r: r["decision"] == "keep")']
    : [`${def} = load_dataset("path/to/this/folder", split="train")   # the default config: ${def}`];
  return [
    '## Loading',
    '',
    '```python',
    'from datasets import load_dataset',
    ...example,
    ...(other ? [`${other} = load_dataset("path/to/this/folder", "${other}", split="train")`] : []),
    '```',
    '',
    'Every config has one split, `train`. A config with no row yet loads with `streaming=True`',
    '(zero rows, all columns); `datasets` 5.2.0 refuses an empty split otherwise. Only the files',
    'listed in `_commits/*.json` are committed: `reasoning-jury shards list` names them.',
  ];
}

/** The whole README.md: front matter, then what the output holds and how it was made. */
export function renderDatasetCard(facts: CardFacts): string {
  const front = stringify({ configs: cardConfigs(facts) }, { lineWidth: 0 });
  const body = [
    '# reasoning-jury output',
    '',
    `Written by \`reasoning-jury ${facts.command}\` and rewritten after each committed range; the commit manifests (\`_commits/\`) are the record, this card a summary of them.`,
    '',
    ...loadingSection(facts),
    '',
    ...contentsSection(facts),
    '',
    ...jurySection(facts),
    ...policySection(facts),
  ];
  return `---\n${front}---\n\n${body.join('\n')}\n`;
}
