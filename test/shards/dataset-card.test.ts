// The dataset card's renderer (src/pipeline/commit/dataset-card.ts): its front matter is YAML that
// names one config per Parquet table with the corpus as the default, globs that reach the part
// files only, and the schema part for a table without one; and a card write that fails is a
// warning, never a thrown error (src/compose/card-writer.ts). What `datasets` makes of real
// cards is test/corpus/dataset-card-cli.test.ts.
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { CardWriter } from '../../src/compose/card-writer.js';
import { policyFacts } from '../../src/compose/card-facts.js';
import { renderDatasetCard, schemaPartKey, type CardFacts, type CardTable } from '../../src/pipeline/commit/dataset-card.js';
import { LocalObjectStore } from '../../src/pipeline/storage/object-store.js';
import { tempDir } from '../helpers/run-setup.js';

const TABLES = ['verdicts', 'defects', 'steps', 'decisions', 'dead_letters'] as const;

function facts(o: { corpus: boolean; details: boolean; parts?: number }): CardFacts {
  const parts = o.parts ?? 2;
  const names: CardTable['name'][] = [...TABLES.slice(0, 4), ...(o.details ? ['verdict_details' as const] : []), 'dead_letters'];
  return {
    command: 'run',
    ranges: parts,
    tables: names.map((name) => ({ name, rows: name === 'dead_letters' ? 0 : 10 * parts, parts })),
    ...(o.corpus ? { corpus: { rows: { keep: 7, drop: 2, review: 1 }, parts: 3 * parts } } : {}),
    jury: { mode: 'consolidation', seats: [{ role: 'juror', id: 'j|0', model: 'org/model-a' }, { role: 'consolidator', id: 'c', model: 'model-b' }], promptHash: 'p0', configHash: 'c0' },
    policy: policyFacts({ rules: [{ name: 'fatal', min_impact: 'fatal', decision: 'drop' }], default: 'keep' }),
  };
}

interface Config {
  config_name: string;
  default?: boolean;
  data_files: Array<{ split: string; path: string | string[] }>;
}

function front(card: string): Config[] {
  const m = /^---\n([\s\S]*?\n)---\n/.exec(card);
  expect(m).not.toBeNull();
  return (YAML.parse(m![1]!) as { configs: Config[] }).configs;
}

/** fsspec-style glob as `datasets` resolves data_files: `*` stays within one folder. */
const matches = (glob: string, key: string): boolean => new RegExp(`^${glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}$`).test(key);

const globsOf = (c: Config): string[] => c.data_files.flatMap((d) => (Array.isArray(d.path) ? d.path : [d.path]));

describe('renderDatasetCard', () => {
  it('corpus on: the corpus is the default config, one train split over every decision, then one config per table', () => {
    const configs = front(renderDatasetCard(facts({ corpus: true, details: false })));
    expect(configs.map((c) => c.config_name)).toEqual(['corpus', ...TABLES]);
    expect(configs.filter((c) => c.default).map((c) => c.config_name)).toEqual(['corpus']);
    expect(configs[0]!.data_files).toEqual([{ split: 'train', path: 'corpus/decision=*/source=*/*.parquet' }]);
    for (const c of configs.slice(1)) expect(c.data_files).toEqual([{ split: 'train', path: `${c.config_name}/source=*/*.parquet` }]);
  });

  it('corpus off: verdicts is the default; verdict_details gets a config only when the run writes it', () => {
    const off = front(renderDatasetCard(facts({ corpus: false, details: false })));
    expect(off.map((c) => c.config_name)).toEqual([...TABLES]);
    expect(off[0]).toMatchObject({ config_name: 'verdicts', default: true });
    const on = front(renderDatasetCard(facts({ corpus: false, details: true })));
    expect(on.map((c) => c.config_name)).toEqual(['verdicts', 'defects', 'steps', 'decisions', 'verdict_details', 'dead_letters']);
    expect(on.filter((c) => c.default)).toHaveLength(1);
  });

  it('globs reach the parts only: not a Delta log checkpoint, staging, manifests, leases, Arrow or JSONL copies', () => {
    const globs = front(renderDatasetCard(facts({ corpus: true, details: true }))).flatMap(globsOf);
    const parts = ['verdicts/source=file/part-a+0-a+9.parquet', 'corpus/decision=review/source=s3/part-a+0-a+9.parquet', 'verdict_details/source=kafka/part-t+0+1-t+0+9.parquet'];
    const others = [
      'verdicts/_delta_log/00000000000000000010.checkpoint.parquet',
      'corpus/_delta_log/00000000000000000010.checkpoint.parquet',
      '_staging/a+0-a+9.0123456789abcdef/verdicts/source=file/part-a+0-a+9.parquet.staged',
      '_commits/a+0-a+9.json',
      '_lease/output/0000000001.json',
      'arrow/verdicts/source=file/part-a+0-a+9.arrow',
      'jsonl/corpus/decision=keep/source=file/part-a+0-a+9.jsonl',
      '_card/verdicts.parquet',
    ];
    for (const p of parts) expect(globs.some((g) => matches(g, p)), p).toBe(true);
    for (const k of others) expect(globs.filter((g) => matches(g, k)), k).toEqual([]);
  });

  it('a table without a committed part lists its schema part, so the config resolves', () => {
    const configs = front(renderDatasetCard(facts({ corpus: true, details: true, parts: 0 })));
    for (const c of configs) {
      const table = c.config_name as CardTable['name'] | 'corpus';
      expect(globsOf(c)).toEqual([table === 'corpus' ? 'corpus/decision=*/source=*/*.parquet' : `${table}/source=*/*.parquet`, schemaPartKey(table)]);
    }
  });

  it('the text gives the jury, the hashes, the policy and the counts; a | in a seat cannot break the table', () => {
    const card = renderDatasetCard(facts({ corpus: true, details: false }));
    expect(card).toContain('| juror | j\\|0 | org/model-a |');
    expect(card).toContain('| consolidator | c | model-b |');
    expect(card).toContain('prompt hash `p0`, config hash `c0`');
    expect(card).toContain('1. `fatal`: drop when `{"min_impact":"fatal"}`');
    expect(card).toContain('| corpus (default) | 10 (keep 7, drop 2, review 1) | 6 |');
    expect(card).toContain('| verdicts | 20 | 2 |');
    expect(card).toContain('| dead_letters | 0 | 2 |');
    expect(renderDatasetCard(facts({ corpus: true, details: false }))).toBe(card); // same facts, same bytes: no rewrite
  });
});

describe('CardWriter', () => {
  it('a card that cannot be written is one warning, and flush() still settles', async () => {
    const dir = tempDir('card-fail');
    mkdirSync(join(dir, 'README.md')); // a folder where the card goes: every put fails (EISDIR)
    const card = new CardWriter({ store: new LocalObjectStore(dir), location: dir, tables: ['verdicts'], corpus: true, facts: { command: 'run' } });
    card.update();
    card.update();
    await expect(card.flush()).resolves.toBeUndefined();
    // The schema parts went first: the card never names a file that is missing.
    expect(readdirSync(join(dir, '_card')).sort()).toEqual(['corpus.parquet', 'verdicts.parquet']);
  });
});
