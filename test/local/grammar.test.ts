import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { JudgementOutput } from '../../schemas/defect.js';
import { CHARS_PER_TOKEN, DEFAULT_GRAMMAR_LIMITS, limitsForBudget, longestReply, toGrammarSchema } from '../../src/llm/local/grammar.js';

const limits = { maxStringLength: 100, maxItems: 5 };
const js = (schema: z.ZodType) => z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });

describe('JSON Schema -> grammar schema', () => {
  it("maps the jury's reply schema: required fields only, capped strings and arrays, closed objects", () => {
    expect(toGrammarSchema(js(JudgementOutput), limits)).toEqual({
      type: 'object',
      properties: {
        negatives: {
          type: 'array',
          maxItems: 5,
          items: {
            type: 'object',
            properties: {
              statement_refs: { type: 'array', maxItems: 5, items: { oneOf: [{ type: 'string', maxLength: 100 }, { type: 'number' }] } },
              what_went_wrong: { type: 'string', minLength: 1, maxLength: 100 },
              impact: { enum: ['neutral', 'minor', 'major', 'fatal'] },
              evidence: { type: 'string', maxLength: 100 },
            },
          },
        },
      },
    });
  });

  it('keeps tighter limits of the schema itself and never goes below its minimums', () => {
    const s = js(z.object({ a: z.string().min(2).max(10), b: z.array(z.int()).min(2).max(3), c: z.array(z.boolean()).min(9) }));
    const g = toGrammarSchema(s, limits) as { properties: Record<string, unknown> };
    expect(g.properties.a).toEqual({ type: 'string', minLength: 2, maxLength: 10 });
    expect(g.properties.b).toEqual({ type: 'array', items: { type: 'integer' }, minItems: 2, maxItems: 3 });
    // A minimum above the cap is clamped to the cap: zod then rejects the reply, and the
    // gateway re-asks, instead of the grammar forcing an endless array.
    expect(g.properties.c).toEqual({ type: 'array', items: { type: 'boolean' }, minItems: 5, maxItems: 5 });
  });

  it('turns nullable and multi-type nodes into alternatives, each with its own caps', () => {
    const g = toGrammarSchema({ type: 'object', properties: { x: { type: ['string', 'null'] }, y: { anyOf: [{ type: 'integer' }, { type: 'null' }] } }, required: ['x', 'y'] }, limits) as {
      properties: Record<string, unknown>;
    };
    expect(g.properties.x).toEqual({ oneOf: [{ type: 'string', maxLength: 100 }, { type: 'null' }] });
    expect(g.properties.y).toEqual({ oneOf: [{ type: 'integer' }, { type: 'null' }] });
  });

  it('keeps const, enums, date formats; drops what it cannot express', () => {
    const g = toGrammarSchema(
      {
        type: 'object',
        properties: { k: { const: 'v' }, e: { enum: [1, 'two', null] }, d: { type: 'string', format: 'date' }, p: { type: 'string', pattern: '^a+$' }, n: { type: 'number', minimum: 3 } },
        required: ['k', 'e', 'd', 'p', 'n'],
      },
      limits,
    ) as { properties: Record<string, unknown> };
    expect(g.properties).toEqual({
      k: { const: 'v' },
      e: { enum: [1, 'two', null] },
      d: { type: 'string', format: 'date' },
      p: { type: 'string', maxLength: 100 },
      n: { type: 'number' },
    });
  });

  it('maps records to open objects with a key cap, and unknown nodes to any value', () => {
    const g = toGrammarSchema(js(z.object({ r: z.record(z.string(), z.int()), u: z.unknown() })), limits) as { properties: Record<string, unknown> };
    expect(g.properties.r).toMatchObject({ type: 'object', additionalProperties: { type: 'integer' }, maxProperties: 5 });
    const any = toGrammarSchema({}, limits) as { oneOf: unknown[] };
    expect(any.oneOf).toHaveLength(4);
    expect(g.properties.u).toEqual(any);
  });

  it('resolves $defs and a self-reference into named definitions', () => {
    type Node = { name: string; children: Node[] };
    const NodeSchema: z.ZodType<Node> = z.lazy(() => z.object({ name: z.string(), children: z.array(NodeSchema) }));
    const g = toGrammarSchema(js(NodeSchema), limits) as { $ref?: string; $defs?: Record<string, unknown> };
    const text = JSON.stringify(g);
    // Every reference points at a definition that exists.
    for (const m of text.matchAll(/"\$ref":"#\/\$defs\/([^"]+)"/g)) expect(g.$defs).toHaveProperty(m[1]!);
    expect(text).not.toContain('"$ref":"#"');

    const withDefs = toGrammarSchema({ $defs: { Id: { type: 'integer' } }, type: 'object', properties: { id: { $ref: '#/$defs/Id' } }, required: ['id'] }, limits);
    expect(withDefs).toEqual({ type: 'object', properties: { id: { $ref: '#/$defs/Id' } }, $defs: { Id: { type: 'integer' } } });
  });
});

describe('grammar caps sized from max_tokens', () => {
  const reply = js(JudgementOutput);
  const size = (l: { maxStringLength: number; maxItems: number }) => longestReply(toGrammarSchema(reply, l));

  it('counts at least the compact JSON of the longest reply the caps allow', () => {
    const l = { maxStringLength: 40, maxItems: 3 };
    const s = 'x'.repeat(40);
    const longest = { negatives: Array.from({ length: 3 }, () => ({ statement_refs: [s, s, s], what_went_wrong: s, impact: 'neutral', evidence: s })) };
    expect(size(l)).toBeGreaterThanOrEqual(JSON.stringify(longest).length);
  });

  it('leaves the caps alone without a budget', () => {
    expect(limitsForBudget(reply, undefined)).toEqual(DEFAULT_GRAMMAR_LIMITS);
  });

  it('picks the largest caps whose longest reply fits the budget, down to one short finding', () => {
    for (const maxTokens of [64, 192, 512, 1024, 4096, 16_384]) {
      const l = limitsForBudget(reply, maxTokens);
      expect(size(l), `max_tokens ${maxTokens}`).toBeLessThanOrEqual(maxTokens * CHARS_PER_TOKEN);
      expect(l.maxItems).toBeGreaterThanOrEqual(1);
      // One more character per string would not fit: the strings are as long as the budget allows.
      if (l.maxStringLength < DEFAULT_GRAMMAR_LIMITS.maxStringLength) expect(size({ ...l, maxStringLength: l.maxStringLength + 1 })).toBeGreaterThan(maxTokens * CHARS_PER_TOKEN);
    }
    // The smoke test's 192-token seats: one finding with strings long enough to read.
    expect(limitsForBudget(reply, 192)).toEqual({ maxItems: 1, maxStringLength: 157 });
    // A large budget keeps several findings of long strings.
    const big = limitsForBudget(reply, 16_384);
    expect(big.maxItems).toBeGreaterThanOrEqual(4);
    expect(big.maxStringLength).toBeGreaterThanOrEqual(256);
  });

  it('never exceeds a lower ceiling', () => {
    expect(limitsForBudget(reply, 100_000, { maxStringLength: 50, maxItems: 3 })).toEqual({ maxStringLength: 50, maxItems: 3 });
  });
});
