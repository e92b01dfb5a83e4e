import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { JudgementOutput } from '../../schemas/defect.js';
import { balancedSpans, extractJson, MAX_ERROR_CHARS, parseStructured } from '../../src/llm/json.js';

const Schema = z.object({ negatives: z.array(z.object({ step: z.int(), why: z.string() })) });
const good = { negatives: [{ step: 3, why: 'sign error in {x}' }] };

describe('extractJson', () => {
  it('reads plain JSON', () => {
    expect(extractJson(JSON.stringify(good))).toEqual({ ok: true, value: good, repaired: false });
  });

  it('strips markdown fences', () => {
    expect(extractJson('```json\n' + JSON.stringify(good, null, 2) + '\n```')).toMatchObject({ ok: true, value: good, repaired: false });
    expect(extractJson('Here:\n```\n{"a": 1}\n```\nthanks')).toMatchObject({ ok: true, value: { a: 1 } });
  });

  it('finds the object amid prose, ignoring braces inside strings', () => {
    const text = `Sure! The analysis (see {note}) gives:\n${JSON.stringify(good)}\nHope this helps }`;
    expect(extractJson(text)).toMatchObject({ ok: true, value: good, repaired: false });
  });

  it('drops <think> blocks that contain braces', () => {
    expect(extractJson('<think>maybe {"negatives": "x"}</think>{"a": 2}')).toMatchObject({ ok: true, value: { a: 2 } });
  });

  it('repairs broken JSON with jsonrepair', () => {
    const r = extractJson("{'negatives': [{'step': 3, 'why': 'x',},],}");
    expect(r).toEqual({ ok: true, value: { negatives: [{ step: 3, why: 'x' }] }, repaired: true });
  });

  it('repairs a reply truncated mid-object', () => {
    const r = extractJson('```json\n{"negatives": [{"step": 3, "why": "cut off her');
    expect(r).toMatchObject({ ok: true, repaired: true, value: { negatives: [{ step: 3 }] } });
  });

  it('reports when there is no JSON', () => {
    expect(extractJson('I could not find any issue.')).toEqual({ ok: false, error: 'no JSON object found in the reply' });
    expect(extractJson('  ')).toEqual({ ok: false, error: 'the reply was empty' });
  });
});

describe('balancedSpans', () => {
  it('skips an unclosed brace and still finds the object after it', () => {
    expect(balancedSpans('oops { never closed {"a": "}"} end')).toEqual(['{"a": "}"}']);
  });
});

describe('parseStructured', () => {
  it('returns the first reading that validates, even after an invalid one', () => {
    const text = `Example format: {"negatives": "list"}\nAnswer: ${JSON.stringify(good)}`;
    expect(parseStructured(text, Schema)).toEqual({ ok: true, value: good, repaired: false });
  });

  it('gives a short error naming the failing path', () => {
    const r = parseStructured('{"negatives": [{"step": "three", "why": "x"}]}', Schema);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error).toContain('negatives[0].step');
      expect(r.error.length).toBeLessThanOrEqual(MAX_ERROR_CHARS);
    }
  });

  it('bounds very long error text', () => {
    const many = { negatives: Array.from({ length: 200 }, () => ({ step: 'x', why: 1 })) };
    const r = parseStructured(JSON.stringify(many), Schema);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.length).toBeLessThanOrEqual(MAX_ERROR_CHARS);
  });

  it('applies the schema transforms (project JudgementOutput)', () => {
    const r = parseStructured('```json\n{"negatives":[{"statement_refs":"STEP-2","what_went_wrong":"w","impact":" Major ","evidence":null}]}\n```', JudgementOutput);
    expect(r).toMatchObject({ ok: true, value: { negatives: [{ statement_refs: ['STEP-2'], impact: 'major', evidence: '' }] } });
  });
});

// The whole reply is tried with JSON.parse before any scan; these pin what the scan decided.
describe('plain JSON replies read as the scan reads them', () => {
  it('a think block inside a JSON string is still stripped first', () => {
    const text = JSON.stringify({ negatives: [{ step: 1, why: 'x <think>{"negatives": []}</think> y' }] });
    expect(parseStructured(text, Schema)).toEqual({ ok: true, value: { negatives: [{ step: 1, why: 'x  y' }] }, repaired: false });
  });

  it('fences inside JSON strings never win over the whole object', () => {
    const text = `{"negatives": [{"step": 2, "why": "\`\`\`"},\n{"step": 3, "why": "\`\`\`"}]}`;
    expect(parseStructured(text, Schema)).toEqual({ ok: true, value: { negatives: [{ step: 2, why: '```' }, { step: 3, why: '```' }] }, repaired: false });
  });

  it('whitespace around the object, a scalar reply, and an object that does not validate', () => {
    expect(extractJson(`\n  ${JSON.stringify(good)}\r\n`)).toEqual({ ok: true, value: good, repaired: false });
    expect(extractJson('42')).toEqual({ ok: false, error: 'no JSON object found in the reply' });
    // Not valid for the schema, and the scan has nothing else to offer (only top-level spans count).
    const nested = `{"answer": ${JSON.stringify(good)}}`;
    expect(parseStructured(nested, Schema)).toMatchObject({ ok: false });
    expect(parseStructured(nested, z.object({ answer: Schema }))).toEqual({ ok: true, value: { answer: good }, repaired: false });
  });
});

describe('bounded work on runaway replies (issue 35)', () => {
  // Each of these held the judging thread for seconds to minutes before the scans were bounded
  // (1 MB of "{": ~24 s; unclosed think tags and fences: quadratic regex backtracking).
  const MB = 1_000_000;
  const runaway: Record<string, string> = {
    'a megabyte of "{"': '{'.repeat(MB),
    'a megabyte of "["': '['.repeat(MB),
    'unclosed think tags after a close': `</think>${'<think>'.repeat(MB / 7)}`,
    'fences that never close': '```\n'.repeat(MB / 4),
    'fence openers without a newline': '```'.repeat(MB / 3),
    'over the search limit': `${'x'.repeat(MB + 10)}{"a": 1}`,
  };
  for (const [what, text] of Object.entries(runaway)) {
    it(`gives up cleanly on ${what}`, () => {
      const r = extractJson(text);
      expect(r.ok).toBe(false);
      expect(parseStructured(text, Schema).ok).toBe(false);
    });
  }

  it('still reads a long reply that is plain JSON, and says why a longer prose one is not searched', () => {
    const long = { negatives: [{ step: 1, why: 'y'.repeat(2 * MB) }] };
    expect(parseStructured(JSON.stringify(long), Schema)).toMatchObject({ ok: true });
    const r = extractJson(`${'x'.repeat(MB + 1)} {"a": 1}`);
    expect(r).toMatchObject({ ok: false, error: expect.stringMatching(/too long to search/) });
  });
});
