/**
 * docs/tables.md, the data contract, generated from the output schemas: every column of every
 * table (nested struct fields and list elements included) with its Arrow type, whether it may be
 * null, and the meaning its zod schema carries (`.describe()`), and where each table's files sit
 * (their Hive partitions), from the key builders in ./layout.ts. `npm run docs:tables` writes it;
 * a test regenerates it in memory and fails when the checked-in page has drifted.
 *
 * Tables come from SHARD_TABLES and the corpus's CorpusRow, so a new table appears here without
 * touching this file; a table or column without a description stops the generator, naming it.
 * The corpus's `record` column has no fixed type (it follows the input) and is documented from
 * CORPUS_RECORD_COLUMN.
 */
import { DataType, type Field } from 'apache-arrow';
import { z } from 'zod';
import { CORPUS_RECORD_COLUMN, CorpusRow, SHARD_TABLES, type ShardTableName } from '../../../schemas/outputs.js';
import { arrowSchemaFor } from './arrow-schema.js';
import { deltaSchema, type DeltaType } from './delta/delta-schema.js';
import { corpusKey, shardKey } from './layout.js';
import { ReasoningJuryError } from '../../util/errors.js';

type AnyObject = z.ZodObject<z.ZodRawShape>;

export interface ColumnDoc {
  /** `name`, `list[].field` for nested columns */
  column: string;
  type: string;
  nullable: boolean;
  meaning: string;
}

export interface TableDoc {
  name: string;
  meaning: string;
  columns: ColumnDoc[];
  /** the Parquet part files' key pattern, e.g. `verdicts/source=<name>/part-<first>-<last>.parquet` */
  files?: string;
  /** Hive partition keys of those folders, in folder order */
  partitions?: string[];
  /** the Delta Lake schema's top-level columns (`output.table_format: delta`), as `name type` */
  delta?: string[];
}

/** Every documented table: the shard tables and the curated corpus. */
export const DOCUMENTED_TABLES: Record<string, AnyObject> = { ...SHARD_TABLES, corpus: CorpusRow };

/** Columns a table has beyond its row schema: the corpus's input record, whose type follows the input. */
const EXTRA_COLUMNS: Record<string, ColumnDoc[]> = {
  corpus: [{ column: CORPUS_RECORD_COLUMN.name, type: CORPUS_RECORD_COLUMN.type, nullable: CORPUS_RECORD_COLUMN.nullable, meaning: CORPUS_RECORD_COLUMN.meaning }],
};

/** Where a table's Parquet parts go, as the layout builds the keys, with placeholders for the values. */
function filesOf(name: string): { files: string; partitions: string[] } | undefined {
  const key =
    name === 'corpus'
      ? corpusKey('keep', 'SOURCE', 'FIRST', 'LAST', 'parquet').replace('decision=keep', 'decision=<keep|drop|review>')
      : name in SHARD_TABLES
        ? shardKey(name as ShardTableName, 'SOURCE', 'FIRST', 'LAST', 'parquet')
        : undefined;
  if (!key) return undefined;
  const files = key.replace('SOURCE', '<name>').replace('FIRST', '<first>').replace('LAST', '<last>');
  return { files, partitions: files.split('/').flatMap((seg) => /^(\w+)=/.exec(seg)?.slice(1) ?? []) };
}

export class TableDocError extends ReasoningJuryError {
  override get kind() {
    return 'internal' as const;
  }
  override name = 'TableDocError';
}

interface DefView {
  type: string;
  innerType?: z.ZodType;
  element?: z.ZodType;
}
const defOf = (s: z.ZodType): DefView => s._zod.def as unknown as DefView;
const WRAPPERS = new Set(['nullable', 'optional', 'default', 'prefault', 'readonly', 'catch', 'nonoptional']);

/** The schema under its wrappers, and the description of the outermost layer that has one. */
function peel(schema: z.ZodType): { inner: z.ZodType; description: string | undefined } {
  let s = schema;
  let description = z.globalRegistry.get(s)?.description;
  for (let d = defOf(s); d.innerType && WRAPPERS.has(d.type); d = defOf(s)) {
    s = d.innerType;
    description ??= z.globalRegistry.get(s)?.description;
  }
  return { inner: s, description };
}

/** Arrow type as a reader meets it; a struct's fields get rows of their own, so it is just `Struct`. */
export function typeText(t: DataType): string {
  if (DataType.isList(t)) {
    const item = t.children[0]!;
    return `List<${typeText(item.type)}${item.nullable ? ' (nullable)' : ''}>`;
  }
  if (DataType.isStruct(t)) return 'Struct';
  return String(t);
}

function columnDocs(path: string, schema: z.ZodType, field: Field, table: string, out: ColumnDoc[]): void {
  const { inner, description } = peel(schema);
  if (!description?.trim()) throw new TableDocError(`column ${table}.${path} has no description: add .describe() to it in schemas/outputs.ts`);
  out.push({ column: path, type: typeText(field.type), nullable: field.nullable, meaning: description.trim() });
  let s = inner;
  let f = field;
  let p = path;
  while (defOf(s).type === 'array') {
    s = peel(defOf(s).element!).inner;
    f = f.type.children[0]!;
    p += '[]';
  }
  if (defOf(s).type !== 'object') return;
  for (const [name, child] of Object.entries((s as AnyObject).shape)) {
    const childField = (f.type.children as Field[]).find((c) => c.name === name)!;
    columnDocs(`${p}.${name}`, child as z.ZodType, childField, table, out);
  }
}

/** One entry per table, in DOCUMENTED_TABLES order (or the tables given, for tests). */
export function tableDocs(tables: Record<string, AnyObject> = DOCUMENTED_TABLES): TableDoc[] {
  return Object.entries(tables).map(([name, schema]) => {
    const meaning = peel(schema).description?.trim();
    if (!meaning) throw new TableDocError(`table ${name} has no description: add .describe() to its row schema in schemas/outputs.ts`);
    const fields = arrowSchemaFor(schema).fields;
    const columns: ColumnDoc[] = [];
    for (const field of fields) columnDocs(field.name, schema.shape[field.name] as z.ZodType, field, name, columns);
    columns.push(...(EXTRA_COLUMNS[name] ?? []));
    const files = filesOf(name);
    const delta = deltaSchema(arrowSchemaFor(schema), files?.partitions ?? []).fields.map((f) => `${f.name} ${deltaTypeText(f.type)}`);
    if (name === 'corpus') delta.push(`${CORPUS_RECORD_COLUMN.name} struct or string (follows the input)`);
    return { name, meaning, columns, ...files, delta };
  });
}

/** A Delta type as Spark SQL spells it. */
function deltaTypeText(t: DeltaType): string {
  if (typeof t === 'string') return t;
  if (t.type === 'array') return `array<${deltaTypeText(t.elementType)}>`;
  return `struct<${t.fields.map((f) => `${f.name}: ${deltaTypeText(f.type)}`).join(', ')}>`;
}

// --- markdown ------------------------------------------------------------------------------------

const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');

function renderTable(t: TableDoc): string {
  const lines = [`## ${t.name}`, '', t.meaning, ''];
  if (t.files) lines.push(`Files: \`${t.files}\`; Hive partitions: ${t.partitions!.map((p) => `\`${p}=\``).join(', then ')}.`, '');
  lines.push('| column | Arrow type | nullable | meaning |', '| --- | --- | --- | --- |');
  for (const c of t.columns) lines.push(`| \`${cell(c.column)}\` | ${cell(c.type)} | ${c.nullable ? 'yes' : 'no'} | ${cell(c.meaning)} |`);
  if (t.delta && t.files) lines.push('', `<details><summary>Delta Lake schema (<code>table_format: delta</code>)</summary>`, '', t.delta.map((d) => `- \`${cell(d)}\``).join('\n'), '', '</details>');
  return lines.join('\n');
}

function intro(tables: TableDoc[]): string {
  return `# Output tables

<!-- Generated by \`npm run docs:tables\` from schemas/outputs.ts (src/pipeline/commit/table-reference.ts); do not edit by hand. -->

The data contract of what \`reasoning-jury run\` (and \`decide\`) writes: every table, every column, its Arrow type
(the same in the Parquet file's \`ARROW:schema\` and in Arrow IPC files), whether it may be null, and
what it means. The zod schemas in \`schemas/outputs.ts\` are the one definition; this page is
generated from them and CI fails when it drifts.

- Each table is written per committed range as part files, Hive-partitioned by \`source\` (the
  corpus by \`decision\`, then \`source\`); only the files a commit manifest (\`_commits/*.json\`)
  lists are committed (\`reasoning-jury shards list OUT\` prints them). The partition values are also
  plain Utf8 columns in the files. Parquet parts sit at the output root; Arrow IPC copies
  (\`--format arrow|both\`) under \`arrow/\`, the JSON Lines corpus (\`--corpus jsonl\`) under \`jsonl/\`.
- Tables join on \`record_id\`; \`defects.defect_id\` is what \`steps.defect_ids\` holds. The corpus
  has one row per judged record, like \`decisions\`; its last column, \`record\`, is the input record
  and its type follows the input (see [corpus](#corpus)).
- \`Dictionary<Int32, Utf8>\` is a dictionary-encoded string: pyarrow reads a dictionary column,
  DuckDB, polars and Spark a plain string.
- A column path with \`[]\` is the element of a list, \`.name\` a field of a struct: \`phase1[].defects[].impact\`
  is the \`impact\` of each defect of each Phase 1 judgement. In DuckDB, \`unnest\` a list to get one
  row per element (\`SELECT record_id, unnest(phase1) AS p FROM ...\`, then \`p.seat_id\`); in pyarrow,
  \`pyarrow.compute.list_flatten\` and \`struct_field\`.
- "nullable: no" is a promise: the writer refuses a row with a null there.
- With \`output.table_format: delta\` (\`--table-format delta\`) each table folder is also a Delta Lake
  table (\`OUT/verdicts/_delta_log/\`, one commit per range; [delta.md](delta.md)). Its schema is this
  contract mapped to Delta types (Utf8 and dictionaries: \`string\`, Int32: \`integer\`, Int64: \`long\`,
  Float64: \`double\`, Bool: \`boolean\`, List: \`array\`, Struct: \`struct\`), listed under each table;
  the partition columns are Delta partition columns, and a table whose files do not hold \`source\`
  (defects, steps, ...) gets it from the folder.

${tables.map((t) => `- [${t.name}](#${t.name}) (${t.columns.length} columns)`).join('\n')}`;
}

/** The whole of docs/tables.md. */
export function renderTablesReference(tables?: Record<string, AnyObject>): string {
  const docs = tableDocs(tables);
  return `${[intro(docs), ...docs.map(renderTable)].join('\n\n')}\n`;
}
