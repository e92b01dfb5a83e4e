import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JudgementOutput } from '../../schemas/defect.js';
import { loadEngine, LocalEngineError, type LocalEngine } from '../../src/llm/local/engine.js';
import type { ChatMessage } from '../../src/llm/types.js';
import { testModelPath } from './model.js';

// Real inference on SmolLM2-135M, one thread: every call here is kept to a few dozen tokens.
let engine: LocalEngine;

beforeAll(async () => {
  engine = await loadEngine({ modelPath: await testModelPath(), threads: 1, contextSize: 2048 });
}, 180_000);

afterAll(async () => {
  await engine?.close();
});

const story: ChatMessage[] = [
  { role: 'system', content: 'You are a creative writer.' },
  { role: 'user', content: 'Write one sentence about a cat.' },
];

const schema = {
  type: 'object',
  properties: {
    verdict: { type: 'string', enum: ['correct', 'wrong'] },
    steps: { type: 'array', items: { type: 'integer' }, maxItems: 3 },
    note: { type: 'string', maxLength: 40 },
  },
  required: ['verdict', 'steps', 'note'],
  additionalProperties: false,
};

describe('local engine (SmolLM2-135M)', () => {
  it('reports the model and its context', () => {
    expect(engine.contextSize).toBe(2048);
    expect(engine.threads).toBe(1);
    expect(engine.modelName.toLowerCase()).toContain('smollm2');
  });

  it('samples by seed: the same seed repeats, other seeds differ', async () => {
    const run = (seed: number) => engine.generate({ messages: story, seed, temperature: 1, maxTokens: 24 });
    const a = await run(1);
    const b = await run(2);
    const a2 = await run(1);
    const c = await run(3);
    expect(a2.content).toBe(a.content);
    // Three seeds all drawing the very same 24 tokens at temperature 1 would mean the seed is ignored.
    expect(new Set([a.content, b.content, c.content]).size).toBeGreaterThan(1);
    for (const g of [a, b, c]) {
      expect(g.tokens_out).toBeGreaterThan(0);
      expect(g.tokens_out).toBeLessThanOrEqual(24);
    }
  }, 120_000);

  it('counts the whole prompt as input, and evaluates a repeated prompt from the KV cache', async () => {
    const first = await engine.generate({ messages: [{ role: 'user', content: 'Count to three.' }], seed: 5, maxTokens: 8, fresh: true });
    const again = await engine.generate({ messages: [{ role: 'user', content: 'Count to three.' }], seed: 6, maxTokens: 8 });
    expect(first.tokens_in).toBeGreaterThan(5);
    expect(first.evaluated_in).toBeGreaterThan(0);
    expect(again.tokens_in).toBe(first.tokens_in);
    expect(again.evaluated_in).toBeLessThan(first.evaluated_in);
  }, 120_000);

  it('constrains the reply to a JSON schema', async () => {
    for (const seed of [7, 8]) {
      const g = await engine.generate({ messages: [{ role: 'user', content: 'Is 2+2=5 correct? Answer in JSON.' }], jsonSchema: schema, seed, temperature: 1, maxTokens: 120 });
      const v = JSON.parse(g.content) as { verdict: string; steps: number[]; note: string };
      expect(['correct', 'wrong']).toContain(v.verdict);
      expect(v.steps.length).toBeLessThanOrEqual(3);
      expect(v.steps.every((n) => Number.isInteger(n))).toBe(true);
      expect(v.note.length).toBeLessThanOrEqual(40);
      expect(Object.keys(v).sort()).toEqual(['note', 'steps', 'verdict']);
    }
  }, 120_000);

  it('accepts a grammar for every shape the schema converter emits', async () => {
    type Tree = { label: string; kids: Tree[] };
    const Tree: z.ZodType<Tree> = z.lazy(() => z.object({ label: z.string(), kids: z.array(Tree) }));
    const shapes = [JudgementOutput, Tree, z.object({ tags: z.record(z.string(), z.int()), maybe: z.string().nullable(), any: z.unknown() }), z.array(z.union([z.literal('a'), z.number()]))];
    for (const s of shapes) {
      const jsonSchema = z.toJSONSchema(s, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
      const g = await engine.generate({ messages: [{ role: 'user', content: 'JSON please.' }], jsonSchema, seed: 1, maxTokens: 12 });
      expect(g.tokens_out).toBeGreaterThan(0);
    }
  }, 120_000);

  it('refuses a prompt that does not fit the context, without retrying', async () => {
    const huge = 'word '.repeat(3000);
    const err = await engine.generate({ messages: [{ role: 'user', content: huge }], maxTokens: 8 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LocalEngineError);
    expect((err as LocalEngineError).code).toBe('context_overflow');
    expect((err as LocalEngineError).retryable).toBe(false);
  }, 60_000);

  it('stops on the caller\'s abort, queued or running, and on its own timeout', async () => {
    const ctl = new AbortController();
    const running = engine.generate({ messages: story, seed: 9, maxTokens: 400, signal: ctl.signal });
    const queuedCtl = new AbortController();
    const queued = engine.generate({ messages: story, seed: 10, maxTokens: 400, signal: queuedCtl.signal });
    queuedCtl.abort(new Error('no longer needed'));
    await expect(queued).rejects.toMatchObject({ code: 'aborted', retryable: false });
    setTimeout(() => ctl.abort(new Error('stop')), 200);
    await expect(running).rejects.toMatchObject({ code: 'aborted', retryable: false });

    const slow = engine.generate({ messages: story, seed: 11, maxTokens: 400, timeoutMs: 150 });
    await expect(slow).rejects.toMatchObject({ code: 'timeout', retryable: true });

    // The engine still works afterwards.
    const ok = await engine.generate({ messages: story, seed: 12, maxTokens: 4 });
    expect(ok.tokens_out).toBeGreaterThan(0);
  }, 120_000);

  it('close stops the running turn and refuses later ones', async () => {
    const running = engine.generate({ messages: story, seed: 13, maxTokens: 400 }).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 100));
    await engine.close();
    expect(await running).toMatchObject({ code: 'closed', retryable: false });
    await expect(engine.generate({ messages: story, maxTokens: 4 })).rejects.toMatchObject({ code: 'closed' });
  }, 60_000);
});
