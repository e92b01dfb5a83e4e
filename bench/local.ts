import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { JudgementOutput } from '../schemas/defect.js';
import type { TraceRecord } from '../schemas/trace.js';
import { parseConfig } from '../src/config/load.js';
import { judgeRecord } from '../src/jury/judge.js';
import { defaultThreads, type Generation } from '../src/llm/local/engine.js';
import { acquireEngine } from '../src/llm/local/registry.js';
import { fetchModel } from '../src/models/fetch.js';
import { prepareRecord } from '../src/pipeline/steps/segment.js';
import { phase1Messages } from '../src/prompts/build.js';
import { loadPromptSet } from '../src/prompts/templates.js';
import { openRuntime } from '../src/compose/runtime.js';
import { fmt, median } from './common.js';

const CONTEXT = 4096;
const MAX_TOKENS = 192;
const REPS = 3;

/**
 * SmolLM2-135M on llama.cpp in this process: prompt and generation speed of the engine, then
 * wall-clock seconds per trace judged by 3 jurors + consolidation (the smoke test's settings),
 * over the 8 demo traces one at a time. Threads: RJ_LOCAL_THREADS, else the default (1 on a
 * 2-core machine).
 */
export async function benchLocal(): Promise<string> {
  const modelPath = (await fetchModel('smollm2-135m')).path;
  const threads = defaultThreads();
  const records = readFileSync('examples/traces/demo.jsonl', 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as TraceRecord);
  // Same key as the runtime's provider below, so both use one loaded model.
  const lease = await acquireEngine({ modelPath, threads, contextSize: CONTEXT });
  const engine = lease.engine;
  try {
    const prepared = prepareRecord(records[1]!, { segmentation: { mode: 'auto', max_steps: 2000 } });
    if (!prepared.ok) throw new Error(prepared.error);
    const messages = phase1Messages(loadPromptSet(), prepared.input, true);
    const schema = z.toJSONSchema(JudgementOutput, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
    const prompt: Generation[] = [];
    const short: Generation[] = [];
    const free: Generation[] = [];
    const json: Generation[] = [];
    for (let i = 0; i < REPS; i++) {
      prompt.push(await engine.generate({ messages, fresh: true, maxTokens: 1, seed: i }));
      // The jury prompt is in the KV cache now: these two measure generation alone, behind it.
      free.push(await engine.generate({ messages, maxTokens: MAX_TOKENS, temperature: 1, seed: 100 + i }));
      json.push(await engine.generate({ messages, jsonSchema: schema, maxTokens: MAX_TOKENS, temperature: 1, seed: 100 + i }));
      short.push(await engine.generate({ messages: [{ role: 'user', content: 'Write a long story about a lighthouse keeper.' }], fresh: true, maxTokens: MAX_TOKENS, temperature: 1, seed: i }));
    }
    const promptRate = (g: Generation) => g.evaluated_in / (g.prompt_ms / 1000);
    const genRate = (g: Generation) => (g.tokens_out - 1) / ((g.total_ms - g.prompt_ms) / 1000);
    const row = (name: string, gs: Generation[], rate: (g: Generation) => number, tokens: (g: Generation) => number) =>
      `| ${name} | ${fmt(median(gs.map(tokens)), 0)} | ${gs.map((g) => fmt(rate(g), 0)).join(', ')} | **${fmt(median(gs.map(rate)), 0)}** |`;
    const engineTable = [
      '| measure | tokens | runs (tokens/s) | median tokens/s |',
      '|---|---|---|---|',
      row('prompt evaluation (jury phase-1 prompt, cold KV cache)', prompt, promptRate, (g) => g.evaluated_in),
      row('generation after a 20-token prompt, free text', short, genRate, (g) => g.tokens_out),
      row('generation after the jury prompt, free text', free, genRate, (g) => g.tokens_out),
      row('generation after the jury prompt, grammar-constrained JudgementOutput', json, genRate, (g) => g.tokens_out),
    ].join('\n');

    const seat = (id: string) => ({ id, endpoint: 'laptop', model: 'smollm2-135m', max_tokens: MAX_TOKENS });
    const config = parseConfig({
      endpoints: { laptop: { kind: 'local', model_path: modelPath, threads, context_size: CONTEXT } },
      jurors: [seat('jury-0'), seat('jury-1'), seat('jury-2')],
      consolidator: seat('consolidator'),
      mode: 'consolidation',
      cache: { enabled: false, dir: '.cache/none' },
    });
    const rt = await openRuntime({ config, auditLogPath: null });
    const before = engine.stats();
    const secs: number[] = [];
    let clean = 0;
    try {
      for (const r of records) {
        const p = prepareRecord(r, config);
        if (!p.ok) throw new Error(p.error);
        const t0 = performance.now();
        const v = await judgeRecord(rt.jury, p.input);
        secs.push((performance.now() - t0) / 1000);
        if (v.error === null && !v.degraded) clean += 1;
      }
    } finally {
      await rt.close();
    }
    const after = engine.stats();
    const total = rt.gateway.ledger.summary().total;
    const n = records.length;
    const promptS = (after.prompt_ms - before.prompt_ms) / 1000;
    const genS = (after.generate_ms - before.generate_ms) / 1000;
    const juryTable = [
      '| traces | s per trace: mean (min–max) | model calls | prompt tokens per trace (evaluated) | output tokens per trace | engine time: prompt / generation | clean verdicts |',
      '|---|---|---|---|---|---|---|',
      `| ${n} | **${fmt(mean(secs), 1)}** (${fmt(Math.min(...secs), 1)}–${fmt(Math.max(...secs), 1)}) | ${total.attempts} | ${fmt(total.tokens_in / n, 0)} (${fmt((after.evaluated_in - before.evaluated_in) / n, 0)}) | ${fmt(total.tokens_out / n, 0)} | ${fmt(promptS, 0)} s / ${fmt(genS, 0)} s | ${clean} of ${n} |`,
    ].join('\n');
    return `model: ${engine.modelName} (Q4_1 GGUF), ${threads} thread(s), context ${engine.contextSize}\n\n${engineTable}\n\n${juryTable}`;
  } finally {
    await lease.release();
  }
}

function mean(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}
