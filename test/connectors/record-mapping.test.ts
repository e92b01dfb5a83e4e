import { describe, expect, it } from 'vitest';
import { FieldMapping } from '../../schemas/trace.js';
import { getPath, mapRecord, mapSourceItem } from '../../src/pipeline/record-mapping.js';

const ok = (raw: unknown, mapping = FieldMapping.parse({}), limits = {}) => {
  const r = mapRecord(raw, mapping, limits);
  if (!r.ok) throw new Error(`expected ok, got: ${r.error}`);
  return r.record;
};
const err = (raw: unknown, mapping = FieldMapping.parse({}), limits = {}) => {
  const r = mapRecord(raw, mapping, limits);
  if (r.ok) throw new Error(`expected an error, got ${JSON.stringify(r.record)}`);
  return r.error;
};

describe('getPath', () => {
  it('follows dots, prefers literal keys containing dots, ignores prototype keys', () => {
    expect(getPath({ a: { b: { c: 1 } } }, 'a.b.c')).toBe(1);
    expect(getPath({ 'a.b': 2, a: { b: 3 } }, 'a.b')).toBe(2);
    expect(getPath({ 'a.b': { c: 4 } }, 'a.b.c')).toBe(4);
    expect(getPath({ a: [10, 20] }, 'a.1')).toBe(20);
    expect(getPath({}, 'constructor')).toBeUndefined();
    expect(getPath({ a: 'str' }, 'a.length')).toBeUndefined();
  });
});

describe('mapRecord', () => {
  it('maps the default field names and coerces numeric ids', () => {
    expect(ok({ id: 42, problem: 'p', trace: 't', extra: 1 })).toEqual({ id: '42', problem: 'p', trace: 't', meta: {} });
    expect(ok({ id: 12345678901234567890n, problem: 'p', trace: 't' }).id).toBe('12345678901234567890');
  });

  it('follows dotted paths and copies meta columns', () => {
    const mapping = FieldMapping.parse({
      id: 'uid',
      problem: 'data.question',
      steps: 'data.reasoning.steps',
      final_solution: 'data.answer',
      meta: ['source', 'data.level', 'absent'],
      gold: 'labels',
    });
    const rec = ok(
      {
        uid: 7,
        source: 'gsm8k',
        data: { question: 'q?', reasoning: { steps: ['a', 'b'] }, answer: 12, level: 3 },
        labels: { error_steps: [2], first_error_step: 2, final_answer_correct: null },
      },
      mapping,
    );
    expect(rec).toEqual({
      id: '7',
      problem: 'q?',
      steps: ['a', 'b'],
      final_solution: '12',
      meta: { source: 'gsm8k', 'data.level': 3 },
      gold: { error_steps: [2], first_error_step: 2 },
    });
  });

  it('meta as one path: copies an object, wraps a scalar, tolerates absence', () => {
    expect(ok({ id: 'a', problem: 'p', trace: 't', meta: { x: 1 } }).meta).toEqual({ x: 1 });
    expect(ok({ id: 'a', problem: 'p', trace: 't', m: 'v' }, FieldMapping.parse({ meta: 'm' })).meta).toEqual({ m: 'v' });
    expect(ok({ id: 'a', problem: 'p', trace: 't', meta: null }).meta).toEqual({});
  });

  it('treats null optional fields as absent and an empty steps array as absent', () => {
    expect(ok({ id: 'a', problem: 'p', trace: 't', steps: null, final_solution: null, gold: null })).toEqual({
      id: 'a',
      problem: 'p',
      trace: 't',
      meta: {},
    });
    expect(ok({ id: 'a', problem: 'p', trace: 't', steps: [] }).steps).toBeUndefined();
  });

  it('rejects with path-qualified reasons', () => {
    expect(err({ problem: 'p', trace: 't' })).toBe("id: missing (no value at 'id')");
    expect(err({ id: null, problem: 'p', trace: 't' })).toBe("id: missing (no value at 'id')");
    expect(err({ id: '', problem: 'p', trace: 't' })).toMatch(/^id: Too small/);
    expect(err({ id: 'a', problem: 5, trace: 't' })).toBe('problem: expected string, received number');
    expect(err({ id: 'a', problem: 'p', steps: ['x', 3] })).toBe('steps[1]: expected string, received number');
    expect(err({ id: 'a', problem: 'p', trace: '   ' })).toBe('trace: record has neither a non-empty trace nor non-empty steps');
    expect(err({ id: 'a', problem: 'p', steps: [] })).toBe('trace: record has neither a non-empty trace nor non-empty steps');
    expect(err({ id: 'a', problem: 'p', trace: 't', gold: { first_error_step: 0 } })).toMatch(/^gold\.first_error_step: /);
    expect(err({ id: true, problem: 'p', trace: 't' })).toBe('id: expected string, received boolean');
    expect(err([1, 2])).toBe('record: expected object, received array');
    expect(err(null)).toBe('record: expected object, received null');
  });

  it('reports several problems at once', () => {
    expect(err({ trace: 't' })).toBe("id: missing (no value at 'id'); problem: missing (no value at 'problem')");
  });

  it('enforces size limits with readable messages', () => {
    const tenMB = 'x'.repeat(10 * 1024 * 1024);
    expect(err({ id: 'a', problem: 'p', trace: tenMB })).toBe('trace is 10.0 MB, over the 8 MB limit');
    expect(err({ id: 'a', problem: 'p', steps: Array(3).fill('y'.repeat(3 * 1024 * 1024)) })).toBe(
      'steps is 9.0 MB, over the 8 MB limit',
    );
    // The step cap is segmentation.max_steps (default 2000), with the reason segmentation gives.
    expect(err({ id: 'a', problem: 'p', steps: Array(2_001).fill('s') })).toBe('segmentation: 2001 steps, over the limit of 2000 (segmentation.max_steps)');
    expect(err({ id: 'a', problem: 'p', steps: ['a', 'b', 'c'] }, undefined, { maxSteps: 2 })).toBe(
      'segmentation: 3 steps, over the limit of 2 (segmentation.max_steps)',
    );
    expect(err({ id: 'a', problem: 'p'.repeat(2 * 1024 * 1024), trace: 't' })).toBe('problem is 2.0 MB, over the 1 MB limit');
    expect(err({ id: 'a', problem: 'p', trace: 't', meta: { blob: 'm'.repeat(1.5 * 1024 * 1024) } })).toBe(
      'meta is 1.5 MB, over the 1 MB limit',
    );
    // Multi-byte text is measured in UTF-8 bytes, not characters.
    expect(err({ id: 'a', problem: 'p', trace: 'é'.repeat(600_000) }, undefined, { maxTraceBytes: 1024 * 1024 })).toBe(
      'trace is 1.1 MB, over the 1 MB limit',
    );
  });
});

describe('mapSourceItem', () => {
  const position = { source: 'file', unit: 'a.jsonl', offset: 3 };
  it('passes records through with their position and turns mapping failures into dead letters', () => {
    expect(mapSourceItem({ position, ok: true, raw: { id: 1, problem: 'p', trace: 't' } })).toEqual({
      ok: true,
      position,
      record: { id: '1', problem: 'p', trace: 't', meta: {} },
    });
    const dead = mapSourceItem({ position, ok: true, raw: { id: 1, problem: 2, trace: 't' } });
    expect(dead).toEqual({
      position,
      ok: false,
      error: 'problem: expected string, received number',
      rawText: '{"id":1,"problem":2,"trace":"t"}',
      rawTextTruncated: false,
    });
  });
  it('truncates the raw text of huge rows', () => {
    const dead = mapSourceItem({ position, ok: true, raw: { id: 1, problem: 'p', trace: 'x'.repeat(9 << 20) } });
    expect(dead.ok).toBe(false);
    if (dead.ok) return;
    expect(dead.rawTextTruncated).toBe(true);
    expect(Buffer.byteLength(dead.rawText)).toBe(64 * 1024);
  });
});
