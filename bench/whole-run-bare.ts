/**
 * Bare-client baseline of the whole-run benchmark: the same `openai` package sends the request
 * bodies the CLI sent (captured by the fake server), 32 in flight and at most 64 starts per
 * second (p-queue's interval limit), and parses each reply's JSON content. Nothing else.
 *
 * Usage: node whole-run-bare.js <bodies.jsonl> <base_url> [--pooled]  (env WHOLE_RUN_BARE_WINDOW, below)
 * --pooled gives the client the product's fetch (src/llm/pooled-fetch.ts over one endpoint's
 * keep-alive pool, as src/llm/openai-provider.ts does): a side row that separates the
 * transport's cost from the rest of the product's.
 */
import OpenAI from 'openai';
import PQueue from 'p-queue';
import { readFileSync } from 'node:fs';

const [bodiesPath, baseURL, flag] = process.argv.slice(2) as [string, string, string | undefined];
const bodies = readFileSync(bodiesPath, 'utf8')
  .split('\n')
  .filter((l) => l.length > 0)
  .map((l) => JSON.parse(l) as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming);

const product = flag === '--pooled' ? await import('../src/llm/pooled-fetch.js') : null;
const pool = product ? product.connectionPool(32) : null;
const pooled = product && pool ? product.pooledFetch(pool) : null;
const client = new OpenAI({
  apiKey: 'not-needed',
  baseURL,
  maxRetries: 0,
  timeout: 35_000,
  logLevel: 'off',
  ...(pooled ? { fetch: pooled } : {}),
});
// WHOLE_RUN_BARE_WINDOW="16/250" (starts/ms) tries the product's rate window for 64/s (src/llm/limits.ts).
const [cap, ms] = (process.env.WHOLE_RUN_BARE_WINDOW ?? '64/1000').split('/').map(Number) as [number, number];
const queue = new PQueue({ concurrency: 32, intervalCap: cap, interval: ms, strict: true });
let failed = 0;
let findings = 0;
await Promise.all(
  bodies.map((body) =>
    queue.add(async () => {
      try {
        const c = await client.chat.completions.create(body);
        findings += (JSON.parse(c.choices[0]?.message.content ?? '{}') as { negatives?: unknown[] }).negatives?.length ?? 0;
      } catch {
        failed += 1;
      }
    }),
  ),
);
pool?.close();
process.stdout.write(JSON.stringify({ calls: bodies.length, failed, findings }) + '\n');
