import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DataType } from 'apache-arrow';
import { ArrowMappingError, ShardRowError, arrowSchemaFor, buildTable } from '../../src/pipeline/commit/arrow-schema.js';
import { DefectRow, SHARD_TABLES, StepRow, VerdictDetailRow, VerdictRow, defectId, dictString, int32, truncateRaw } from '../../schemas/outputs.js';
import { defectRows, verdictDetailRows, verdictRows } from './synth.js';

const typeOf = (schema: z.ZodObject<z.ZodRawShape>) =>
  Object.fromEntries(arrowSchemaFor(schema).fields.map((f) => [f.name, `${String(f.type)}${f.nullable ? '?' : ''}`]));

describe('arrowSchemaFor', () => {
  it('maps DefectRow to typed columns: int32 lists, utf8 lists, dictionaries, nullable ints', () => {
    expect(typeOf(DefectRow)).toEqual({
      record_id: 'Utf8',
      defect_id: 'Utf8',
      statement_refs: 'List<Int32>',
      impact: 'Dictionary<Int32, Utf8>',
      what_went_wrong: 'Utf8',
      evidence: 'Utf8',
      correct_value: 'Utf8?',
      vote_count: 'Int32?',
      voters: 'List<Utf8>',
      category_id: 'Dictionary<Int32, Utf8>?',
      leaf_id: 'Dictionary<Int32, Utf8>?',
      taxonomy_status: 'Dictionary<Int32, Utf8>?',
    });
    const refs = arrowSchemaFor(DefectRow).fields.find((f) => f.name === 'statement_refs')!;
    expect(refs.type.children[0].nullable).toBe(false);
  });

  it('maps VerdictRow widths: int32 counts, int64 tokens/offsets, float64 money/time, bool', () => {
    const t = typeOf(VerdictRow);
    expect([t.jurors_total, t.n_steps, t.n_defects, t.rounds]).toEqual(['Int32', 'Int32', 'Int32', 'Int32']);
    expect([t.tokens_in, t.tokens_out, t.source_offset]).toEqual(['Int64', 'Int64', 'Int64']);
    // cost_usd is nullable: null for a record with an unpriced model's call (issue 13).
    expect([t.confidence, t.cost_usd, t.latency_ms]).toEqual(['Float64', 'Float64?', 'Float64']);
    expect(t.degraded).toBe('Bool');
    expect([t.mode, t.termination_reason, t.max_impact]).toEqual(['Dictionary<Int32, Utf8>', 'Dictionary<Int32, Utf8>', 'Dictionary<Int32, Utf8>?']);
    expect([t.source, t.prompt_hash, t.meta]).toEqual(['Utf8', 'Dictionary<Int32, Utf8>', 'Utf8?']);
  });

  it('covers every shard table and gives each dictionary column its own id', () => {
    for (const schema of Object.values(SHARD_TABLES)) {
      const fields = arrowSchemaFor(schema).fields;
      expect(fields.map((f) => f.name)).toEqual(Object.keys(schema.shape));
      const ids = fields.filter((f) => DataType.isDictionary(f.type)).map((f) => f.type.id);
      expect(new Set(ids).size).toBe(ids.length);
    }
    // label is nullable: null on the steps of a record without a verdict (unjudged, not clean).
    expect(typeOf(StepRow)).toEqual({ record_id: 'Utf8', step_index: 'Int32', max_impact: 'Dictionary<Int32, Utf8>?', label: 'Bool?', defect_ids: 'List<Utf8>' });
  });

  it('honours arrow hints, optional and default wrappers', () => {
    const s = z.object({
      a: z.int().meta({ arrow: 'int32' }),
      b: z.int32().meta({ arrow: 'int64' }).optional(),
      c: z.enum(['x', 'y']).meta({ arrow: 'utf8' }),
      d: dictString().nullable(),
      e: z.array(z.number()).default([]),
      f: z.uint32(),
    });
    expect(typeOf(s)).toEqual({ a: 'Int32', b: 'Int64?', c: 'Utf8', d: 'Dictionary<Int32, Utf8>?', e: 'List<Float64>', f: 'Int64' });
  });

  it('maps nested objects and arrays: List<Struct<...>>, lists of lists, plain Utf8 below the top level', () => {
    const s = z.object({
      top: dictString(),
      jurors: z.array(
        z.object({
          id: dictString(),
          mode: z.enum(['a', 'b']),
          tokens: z.int(),
          note: z.string().nullable(),
          defects: z.array(z.object({ refs: z.array(int32().positive()), impact: z.enum(['x']) })),
        }),
      ),
      grid: z.array(z.array(int32())),
      one: z.object({ n: int32() }).nullable(),
    });
    expect(typeOf(s)).toEqual({
      top: 'Dictionary<Int32, Utf8>',
      jurors: 'List<Struct<{id:Utf8, mode:Utf8, tokens:Int64, note:Utf8, defects:List<Struct<{refs:List<Int32>, impact:Utf8}>>}>>',
      grid: 'List<List<Int32>>',
      one: 'Struct<{n:Int32}>?',
    });
    const jurors = arrowSchemaFor(s).fields[1]!;
    const struct = jurors.type.children[0]!;
    expect(struct.nullable).toBe(false);
    expect(struct.type.children.map((f: { name: string; nullable: boolean }) => `${f.name}${f.nullable ? '?' : ''}`)).toEqual(['id', 'mode', 'tokens', 'note?', 'defects']);
    const detail = typeOf(VerdictDetailRow);
    expect(detail.phase1).toMatch(/^List<Struct<\{seat_id:Utf8, model:Utf8, status:Utf8, error:Utf8, dropped_refs:Int32, defects:List<Struct<\{statement_refs:List<Int32>, impact:Utf8/);
    expect(detail.transcript).toBe('List<Struct<{turn:Int32, round:Int32, speaker:Utf8, instruction:Utf8, content:Utf8}>>');
    expect(detail.dissenting_views).toBe('List<Utf8>');
  });

  it('refuses shapes it cannot map faithfully', () => {
    expect(() => arrowSchemaFor(z.object({ x: z.object({ y: z.date() }) }))).toThrow(/x\.y: zod type 'date'/);
    expect(() => arrowSchemaFor(z.object({ x: z.record(z.string(), z.string()) }))).toThrow(ArrowMappingError);
    expect(() => arrowSchemaFor(z.object({ x: z.date() }))).toThrow(/date/);
    expect(() => arrowSchemaFor(z.object({ x: z.number().meta({ arrow: 'int32' }) }))).toThrow(/non-integer/);
    expect(() => arrowSchemaFor(z.object({ x: z.array(z.union([z.string(), z.int32()])) }))).toThrow(/x\[\]: zod type 'union'/);
  });
});

describe('buildTable', () => {
  it('builds one batch whose values keep their types (int64 as BigInt, lists as lists)', () => {
    const rows = verdictRows(50);
    const t = buildTable(VerdictRow, rows);
    expect(t.numRows).toBe(50);
    expect(t.batches.length).toBe(1);
    expect(t.getChild('tokens_in')!.get(0)).toBe(3_000_000_000n);
    expect(t.getChild('source_offset')!.get(1)).toBe(BigInt(rows[1]!.source_offset));
    expect(t.getChild('max_impact')!.get(0)).toBeNull();
    const defects = buildTable(DefectRow, defectRows(10));
    expect(Array.from(defects.getChild('statement_refs')!.get(1)!.toArray())).toEqual([2, 5]);
    expect(defects.getChild('statement_refs')!.get(0)!.length).toBe(0);
  });

  it('rejects string-typed numbers, floats in int columns and out-of-range int32 with the row index', () => {
    const good = verdictRows(3);
    const bad = (patch: Record<string, unknown>) => [...good.slice(0, 2), { ...good[2]!, ...patch }];
    for (const patch of [{ n_steps: '12' }, { n_steps: 1.5 }, { n_steps: 2 ** 31 }, { tokens_in: '5' }, { confidence: '0.5' }]) {
      try {
        buildTable(VerdictRow, bad(patch));
        expect.unreachable(`accepted ${JSON.stringify(patch)}`);
      } catch (e) {
        expect(e).toBeInstanceOf(ShardRowError);
        expect((e as ShardRowError).rowIndex).toBe(2);
        expect((e as ShardRowError).issues[0]!.path).toEqual([Object.keys(patch)[0]]);
      }
    }
    expect(() => buildTable(DefectRow, [{ ...defectRows(1)[0]!, statement_refs: ['3'] }])).toThrow(/statement_refs/);
    expect(() => buildTable(DefectRow, [{ ...defectRows(1)[0]!, voters: null }])).toThrow(ShardRowError);
  });

  it('drops keys the schema does not know and builds empty tables', () => {
    const t = buildTable(StepRow, [{ record_id: 'r', step_index: 1, max_impact: null, label: false, defect_ids: [], extra: 1 }]);
    expect(t.schema.fields.map((f) => f.name)).not.toContain('extra');
    const empty = buildTable(DefectRow, []);
    expect(empty.numRows).toBe(0);
    expect(empty.schema.fields.length).toBe(Object.keys(DefectRow.shape).length);
  });

  it('builds nested columns: int64 inside structs as BigInt, nulls inside structs, empty lists at every level', () => {
    const rows = verdictDetailRows(40);
    const t = buildTable(VerdictDetailRow, rows);
    const at = (i: number) => t.getChild('phase1')!.get(i)!;
    const withDefects = rows.findIndex((r) => r.phase1.some((p) => p.defects.length > 1));
    const j = rows[withDefects]!.phase1.findIndex((p) => p.defects.length > 1);
    const got = at(withDefects).get(j)!;
    expect(got.seat_id).toBe(rows[withDefects]!.phase1[j]!.seat_id);
    expect(got.defects.get(1).impact).toBe(rows[withDefects]!.phase1[j]!.defects[1]!.impact);
    expect(got.defects.get(1).statement_refs.length).toBe(0);
    expect(t.getChild('calls')!.get(0)!.get(0)!.tokens_in).toBe(3_000_000_000n);
    const failed = rows.findIndex((r) => r.phase1.some((p) => p.status === 'failed'));
    const fj = rows[failed]!.phase1.findIndex((p) => p.status === 'failed');
    expect(at(failed).get(fj)!.error).toBe('timeout after 3 attempts');
    expect(at(failed).get((fj + 1) % 3)!.error).toBeNull();
    expect(rows.some((r) => r.phase1.length === 0)).toBe(true);
    expect(t.getChild('phase1')!.get(rows.findIndex((r) => r.phase1.length === 0))!.length).toBe(0);
  });

  it('refuses a null in a NOT NULL nested field, by zod and, unvalidated, by the encoder', () => {
    const row = verdictDetailRows(2)[1]!;
    const bad = { ...row, phase1: [{ ...row.phase1[0]!, model: null }] };
    try {
      buildTable(VerdictDetailRow, [bad]);
      expect.unreachable('accepted a null model');
    } catch (e) {
      expect(e).toBeInstanceOf(ShardRowError);
      expect((e as ShardRowError).issues[0]!.path).toEqual(['phase1', 0, 'model']);
    }
    expect(() => buildTable(VerdictDetailRow, [bad], { validate: false })).toThrow(/NOT NULL struct field model/);
  });

  it('with validate:false still refuses nulls in NOT NULL columns', () => {
    const row = { ...defectRows(1)[0]!, record_id: null };
    expect(() => buildTable(DefectRow, [row], { validate: false })).toThrow(/NOT NULL/);
  });

  it('encodes utf8 and list columns exactly like apache-arrow would (nulls, empties, growth, lone surrogates)', () => {
    const s = z.object({ s: z.string().nullable(), l: z.array(z.string()).nullable(), n: z.array(z.int32()) });
    const big = 'ß'.repeat(200_000); // forces the encode buffer to grow
    const rows = [
      { s: 'a', l: ['x', ''], n: [1] },
      { s: null, l: null, n: [] },
      { s: '', l: [], n: [2, 3] },
      { s: big, l: [big, 'é'], n: [] },
      { s: 'lone \ud800 surrogate', l: ['🧮'], n: [-5] },
    ];
    const t = buildTable(s, rows);
    const plain = (v: unknown) => (v && typeof v === 'object' && 'toArray' in v ? Array.from((v as { toArray(): ArrayLike<unknown> }).toArray()) : v);
    const back = rows.map((_, i) => ({ s: t.getChild('s')!.get(i), l: plain(t.getChild('l')!.get(i)), n: plain(t.getChild('n')!.get(i)) }));
    expect(back).toEqual([...rows.slice(0, 4), { s: 'lone \ufffd surrogate', l: ['🧮'], n: [-5] }]);
    expect(t.getChild('s')!.nullCount).toBe(1);
    expect(t.getChild('l')!.nullCount).toBe(1);
  });

  it('stores schema metadata', () => {
    const t = buildTable(StepRow, [], { metadata: { 'reasoning_jury.table': 'steps' } });
    expect(t.schema.metadata.get('reasoning_jury.table')).toBe('steps');
  });
});

describe('row helpers', () => {
  it('defectId is record id + ordinal', () => {
    expect(defectId('rec-1', 0)).toBe('rec-1#d0');
  });
  it('truncateRaw never splits a surrogate pair', () => {
    const s = 'a' + '🧮'.repeat(10);
    const r = truncateRaw(s, 4); // 'a' + high surrogate of the 2nd emoji would be cut
    expect(r).toEqual({ raw: 'a🧮', raw_truncated: true });
    expect(truncateRaw('short', 10)).toEqual({ raw: 'short', raw_truncated: false });
  });
});
