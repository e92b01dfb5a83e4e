import { createHash } from 'node:crypto';
import type { ChatRequest } from '../llm/types.js';
import { BLOCK } from '../prompts/build.js';
import { blockMap } from './blocks.js';
import { goldKey, NO_GOLD, type GoldIndex } from './gold.js';
import { createRng, type Rng } from '../util/prng.js';
import { modelProfile, type ModelProfile, type SimProfile } from './profile.js';
import { DEFAULT_TASKS, stepsOf, TaskInputError, type SimTask } from './tasks.js';
import { reasoningText, renderJson, type OutputFormat } from './text.js';

/**
 * The simulator's pure core: a request and an attempt number in, a reply or a fault out.
 * Nothing here reads the clock or keeps state, so identical inputs give identical outputs.
 *
 * Two random streams per request:
 * - content: (profile seed, model, request seed, task, record key[, task key]). It decides the
 *   findings, so a retry of the same request gets the same findings, while jurors sharing a
 *   model but with distinct seeds sample independently.
 * - fault: the same parts plus the attempt number. It decides HTTP faults, the output format
 *   (fenced, broken JSON, ...) and latency, so a retry can succeed where the first try failed.
 *
 * Token counts are estimated as ceil(characters / 4), the usual rule of thumb for English text
 * with BPE tokenizers: prompt = all message contents, completion = content + reasoning.
 */

export type EngineResult =
  | {
      kind: 'ok';
      task: string;
      content: string;
      reasoning?: string;
      tokens_in: number;
      tokens_out: number;
      latency_ms: number;
      format: OutputFormat;
      /** 'length' when max_tokens cut the reply short */
      finish_reason: 'stop' | 'length';
    }
  | { kind: 'fault'; task: string; status: 429 | 500 | 'timeout'; retryAfterMs?: number; /** timeouts: hang this long, then 504; absent = until the client leaves */ hangMs?: number }
  | { kind: 'error'; status: 400 | 404; code: string; message: string };

export interface EngineOptions {
  profile: SimProfile;
  gold?: GoldIndex;
  /** tasks to recognise, most specific first; DEFAULT_TASKS when absent */
  tasks?: readonly SimTask[];
}

export function estimateTokens(chars: number): number {
  return Math.ceil(chars / 4);
}

/** Identity of a request for attempt counting: everything that shapes the reply. */
export function requestKey(req: ChatRequest): string {
  const { model, messages, seed, temperature, top_p, max_tokens, reasoning_effort } = req;
  return createHash('sha256')
    .update(JSON.stringify({ model, messages: messages.map((m) => [m.role, m.content]), seed, temperature, top_p, max_tokens, reasoning_effort }))
    .digest('hex');
}

function drawLatency(rng: Rng, m: ModelProfile): number {
  const l = m.latency_ms;
  const z = rng.normal(); // always drawn so the stream layout does not depend on the profile
  if (l === 0) return 0;
  const ms = l.median * Math.exp(l.sigma * z);
  return Math.round(l.max !== undefined ? Math.min(ms, l.max) : ms);
}

function drawFormat(u: number, m: ModelProfile, repairable: boolean): OutputFormat {
  let t = m.rate_malformed_json;
  if (u < t) return repairable ? 'malformed_repairable' : 'malformed_broken';
  if (u < (t += m.rate_schema_invalid)) return 'schema_invalid';
  if (u < (t += m.rate_fenced_json)) return 'fenced';
  if (u < (t += m.rate_prose_json)) return 'prose';
  return 'json';
}

export class SimEngine {
  readonly profile: SimProfile;
  readonly gold: GoldIndex;
  readonly tasks: readonly SimTask[];

  constructor(opts: EngineOptions) {
    this.profile = opts.profile;
    this.gold = opts.gold ?? NO_GOLD;
    this.tasks = opts.tasks ?? DEFAULT_TASKS;
  }

  /** The profile serving `model`, or null (HTTP 404). */
  modelProfile(model: string): ModelProfile | null {
    return modelProfile(this.profile, model);
  }

  /** `attempt` counts tries of this identical request, starting at 1. */
  respond(req: ChatRequest, attempt: number): EngineResult {
    const model = this.modelProfile(req.model);
    if (!model) {
      return { kind: 'error', status: 404, code: 'model_not_found', message: `The model "${req.model}" does not exist in the simulator profile and the profile has no "default" entry.` };
    }
    const prompt = req.messages.map((m) => m.content).join('\n');
    const blocks = blockMap(prompt);
    const task = this.tasks.find((t) => t.detect(blocks, req));
    if (!task) {
      const found = [...blocks.keys()];
      return {
        kind: 'error',
        status: 400,
        code: 'unknown_task',
        message: `simulator cannot tell which task this request is: it recognises ${this.tasks.map((t) => t.name).join(', ')} by their framed blocks, and the prompt has ${found.length ? found.map((l) => `"${l}"`).join(', ') : 'no valid framed blocks'}.`,
      };
    }
    const problem = blocks.get(BLOCK.problem) ?? null;
    const trace = blocks.get(BLOCK.trace) ?? '';
    const record = goldKey(problem ?? '', trace);
    const base = [this.profile.seed, req.model, req.seed ?? null, task.name, record, task.streamKey?.(blocks) ?? null];

    // Fault stream: fixed draw order, whatever the outcome, so streams stay comparable. The
    // conversation length is part of it: a corrective re-ask (same blocks, more messages) is a
    // fresh draw, as a real model's second try would be, not a replay of the broken reply.
    const f = createRng(['fault', ...base, req.messages.length, attempt]);
    const uFault = f.next();
    const uFormat = f.next();
    const repairable = f.chance(model.malformed_repairable);
    const latency = drawLatency(f, model);
    let t = model.rate_429;
    if (uFault < t) return { kind: 'fault', task: task.name, status: 429, retryAfterMs: model.retry_after_ms };
    if (uFault < (t += model.rate_500)) return { kind: 'fault', task: task.name, status: 500 };
    if (uFault < (t += model.rate_timeout)) return { kind: 'fault', task: task.name, status: 'timeout', ...(model.hang_ms ? { hangMs: model.hang_ms } : {}) };

    const rng = createRng(['content', ...base]);
    const steps = stepsOf(blocks);
    let out;
    try {
      out = task.run({ request: req, modelName: req.model, model, blocks, steps, gold: this.gold.lookup(problem, trace), rng });
    } catch (e) {
      if (e instanceof TaskInputError) return { kind: 'error', status: 400, code: 'invalid_task_input', message: `simulator (${task.name}): ${e.message}` };
      throw e;
    }
    const format = out.kind === 'json' ? drawFormat(uFormat, model, repairable) : 'json';
    let content = out.kind === 'json' ? renderJson(f, out.value, format) : out.text;
    let reasoning = model.reasoning_words > 0 ? reasoningText(rng, steps, out.notes, model.reasoning_words) : undefined;

    let finish: 'stop' | 'length' = 'stop';
    const budget = req.max_tokens !== undefined ? req.max_tokens * 4 : Infinity;
    const produced = content.length + (reasoning?.length ?? 0);
    if (produced > budget) {
      // Reasoning comes first, so a tight budget eats into the answer.
      finish = 'length';
      if (reasoning !== undefined) reasoning = reasoning.slice(0, budget);
      content = content.slice(0, Math.max(0, budget - (reasoning?.length ?? 0)));
    }
    return {
      kind: 'ok',
      task: task.name,
      content,
      ...(reasoning !== undefined ? { reasoning } : {}),
      tokens_in: estimateTokens(req.messages.reduce((n, m) => n + m.content.length, 0)),
      tokens_out: estimateTokens(content.length + (reasoning?.length ?? 0)),
      latency_ms: latency,
      format,
      finish_reason: finish,
    };
  }
}
