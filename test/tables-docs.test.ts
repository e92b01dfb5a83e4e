import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CorpusRow, SHARD_TABLES, dictString, int32 } from '../schemas/outputs.js';
import { arrowSchemaFor } from '../src/pipeline/commit/arrow-schema.js';
import { corpusTable } from '../src/pipeline/commit/corpus.js';
import { renderTablesReference, tableDocs } from '../src/pipeline/commit/table-reference.js';
import { packageRoot } from '../src/util/paths.js';

describe('docs/tables.md', () => {
  it('is what the output schemas generate (run `npm run docs:tables` after changing a table)', () => {
    const onDisk = readFileSync(join(packageRoot(), 'docs', 'tables.md'), 'utf8');
    // A plain equality check first: a diff of two long strings buries the one-line message.
    if (onDisk !== renderTablesReference()) {
      expect.fail('docs/tables.md is out of date with schemas/outputs.ts: regenerate it with `npm run docs:tables` and commit the result');
    }
  });

  it('lists every table and every top-level column with its Arrow type, nullability and a meaning', () => {
    const docs = tableDocs();
    expect(docs.map((t) => t.name)).toEqual([...Object.keys(SHARD_TABLES), 'corpus']);
    // The corpus's columns as its writer builds a part (a JSON input's, whose record is Utf8).
    const corpusFields = corpusTable({ format: 'parquet', entries: [] }, [], {}).schema.fields;
    for (const t of docs) {
      expect(t.meaning.length, t.name).toBeGreaterThan(20);
      const fields = t.name === 'corpus' ? corpusFields : arrowSchemaFor(SHARD_TABLES[t.name as keyof typeof SHARD_TABLES]).fields;
      const top = t.columns.filter((c) => !/[.[]/.test(c.column));
      // Independent of the walker: the Arrow schema the writer uses.
      expect(top.map((c) => [c.column, c.nullable])).toEqual(fields.map((f) => [f.name, f.nullable]));
      for (const c of t.columns) expect(c.meaning.length, `${t.name}.${c.column}`).toBeGreaterThan(10);
    }
    const detail = docs.find((t) => t.name === 'verdict_details')!.columns;
    const row = (col: string) => detail.find((c) => c.column === col);
    expect(row('phase1')).toMatchObject({ type: 'List<Struct>', nullable: false });
    expect(row('phase1[].error')).toMatchObject({ type: 'Utf8', nullable: true });
    expect(row('phase1[].defects[].statement_refs')).toMatchObject({ type: 'List<Int32>', nullable: false });
    expect(row('transcript[].content')).toMatchObject({ type: 'Utf8' });
    expect(row('calls[].tokens_in')).toMatchObject({ type: 'Int64' });
    const md = renderTablesReference();
    expect(md).toContain('| `decision` | Dictionary<Int32, Utf8> | no | keep, drop or review');
    expect(md).toContain('Files: `verdicts/source=<name>/part-<first>-<last>.parquet`; Hive partitions: `source=`.');
  });

  it('documents the corpus: its fixed columns from CorpusRow, the record column that follows the input, and the decision= partition', () => {
    const corpus = tableDocs().find((t) => t.name === 'corpus')!;
    expect(corpus.columns.slice(0, -1).map((c) => c.column)).toEqual(Object.keys(CorpusRow.shape));
    expect(corpus.columns.find((c) => c.column === 'decision')).toMatchObject({ type: 'Utf8', nullable: false });
    expect(corpus.columns.find((c) => c.column === 'source_offset')).toMatchObject({ type: 'Int64', nullable: false });
    expect(corpus.columns.find((c) => c.column === 'top_categories')).toMatchObject({ type: 'List<Utf8>' });
    const record = corpus.columns.at(-1)!;
    expect(record.column).toBe('record');
    expect(record.type).toMatch(/Struct.*Parquet input.*Utf8.*JSON input/);
    expect(record.meaning).toMatch(/Kafka/);
    expect(record.meaning).toMatch(/jsonl/);
    expect(corpus.partitions).toEqual(['decision', 'source']);
    const md = renderTablesReference();
    expect(md).toContain('- [corpus](#corpus) (16 columns)');
    expect(md).toContain('Files: `corpus/decision=<keep|drop|review>/source=<name>/part-<first>-<last>.parquet`; Hive partitions: `decision=`, then `source=`.');
    expect(md).toContain('| `vote_count` | Int32 | yes |');
  });

  it('takes a new table as it comes, nested columns included', () => {
    const extra = z
      .object({
        id: z.string().describe('An id of the new table.'),
        tags: z.array(z.object({ k: dictString().describe('Key of the tag.'), n: int32().nullable().describe('Count, when known.') })).describe('Tags of the row.'),
      })
      .describe('A table added later, documented without changing the generator.');
    const md = renderTablesReference({ ...SHARD_TABLES, corpus_like: extra });
    expect(md).toContain('- [corpus_like](#corpus_like) (4 columns)');
    expect(md).toContain('## corpus_like\n\nA table added later');
    expect(md).toContain('| `tags[].k` | Utf8 | no | Key of the tag. |');
    expect(md).toContain('| `tags[].n` | Int32 | yes | Count, when known. |');
  });

  it('refuses a table or a column without a description, naming it', () => {
    const bare = z.object({ a: z.string().describe('Described.'), b: z.array(z.object({ c: z.string() })).describe('A list.') }).describe('A table.');
    expect(() => tableDocs({ t: bare })).toThrow('column t.b[].c has no description');
    expect(() => tableDocs({ u: z.object({ a: z.string().describe('Described.') }) })).toThrow('table u has no description');
  });
});
