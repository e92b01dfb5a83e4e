/**
 * One GGUF model run in-process by llama.cpp (node-llama-cpp): one model, one context, one
 * sequence, and a queue in front of it. Jurors that share the model take turns; consecutive
 * turns with the same prompt (a homogeneous panel) reuse the evaluated prompt from the KV cache,
 * and each turn samples with its own seed, so the panel still draws independent samples.
 *
 * node-llama-cpp is imported on first load, so commands that never run a local model do not pay
 * for loading its native binding.
 */
import { availableParallelism } from 'node:os';
import type { ChatHistoryItem, Llama, LlamaChat, LlamaContext, LlamaContextSequence, LlamaGrammar, LlamaModel } from 'node-llama-cpp';
import type { ChatMessage } from '../types.js';
import { DEFAULT_GRAMMAR_LIMITS, toGrammarSchema, type GrammarLimits } from './grammar.js';
import { TurnQueue } from './queue.js';

export interface EngineOptions {
  modelPath: string;
  threads: number;
  /** tokens; default the model's training context, capped at DEFAULT_MAX_CONTEXT */
  contextSize?: number;
  grammarLimits?: GrammarLimits;
  /** where llama.cpp warnings go (default: stderr) */
  log?: (line: string) => void;
}

export interface GenerateOptions {
  messages: ChatMessage[];
  /** constrain the reply to this JSON Schema (via a grammar) */
  jsonSchema?: Record<string, unknown>;
  temperature?: number;
  topP?: number;
  maxTokens?: number;
  seed?: number;
  signal?: AbortSignal;
  /** limit on this turn's own run time; time spent waiting in the queue does not count */
  timeoutMs?: number;
  /** drop the KV cache first (benchmarks measure cold prompt evaluation) */
  fresh?: boolean;
}

export interface Generation {
  content: string;
  /** thought segments, for models whose chat template separates them */
  reasoning?: string;
  /** the prompt's length in tokens, as an API would bill it (reused KV-cache tokens included) */
  tokens_in: number;
  tokens_out: number;
  /** prompt tokens actually evaluated this turn (the rest came from the KV cache) */
  evaluated_in: number;
  /** from the start of the turn to the first generated token */
  prompt_ms: number;
  total_ms: number;
  stop_reason: string;
}

export interface EngineStats {
  turns: number;
  tokens_in: number;
  evaluated_in: number;
  tokens_out: number;
  prompt_ms: number;
  generate_ms: number;
  queued: number;
}

export type EngineErrorCode = 'timeout' | 'aborted' | 'context_overflow' | 'invalid_schema' | 'closed' | 'load' | 'generation';

/** `retryable`: another try may succeed (a timeout, a glitch in decoding), unlike a bad request. */
export class LocalEngineError extends Error {
  constructor(
    message: string,
    readonly code: EngineErrorCode,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'LocalEngineError';
  }
}

export interface LocalEngine {
  readonly modelPath: string;
  readonly modelName: string;
  readonly contextSize: number;
  readonly threads: number;
  generate(opts: GenerateOptions): Promise<Generation>;
  stats(): EngineStats;
  close(): Promise<void>;
}

export const DEFAULT_MAX_CONTEXT = 16_384;
const GRAMMAR_CACHE_SIZE = 16;

/**
 * Threads when the config names none: RJ_LOCAL_THREADS, else 1 under CI (a second thread
 * spin-waits badly on a loaded 2-core machine), else all cores but one, at most 4.
 */
export function defaultThreads(env: NodeJS.ProcessEnv = process.env, cores: number = availableParallelism()): number {
  const fromEnv = Number(env.RJ_LOCAL_THREADS);
  if (Number.isInteger(fromEnv) && fromEnv > 0) return fromEnv;
  if (env.CI && env.CI !== 'false' && env.CI !== '0') return 1;
  return Math.max(1, Math.min(4, cores - 1));
}

export async function loadEngine(opts: EngineOptions): Promise<LocalEngine> {
  const log = opts.log ?? ((line: string) => process.stderr.write(`reasoning-jury local: ${line}\n`));
  let lib: typeof import('node-llama-cpp');
  try {
    lib = await import('node-llama-cpp');
  } catch (err) {
    throw new LocalEngineError(`cannot load node-llama-cpp: ${(err as Error).message}`, 'load', false);
  }
  let llama: Llama | undefined;
  let model: LlamaModel | undefined;
  let context: LlamaContext | undefined;
  try {
    // CPU only and never a source build: nothing may be downloaded at run time here.
    llama = await lib.getLlama({
      gpu: false,
      build: 'never',
      maxThreads: opts.threads,
      logLevel: lib.LlamaLogLevel.error,
      logger: (level, message) => {
        const text = message.trim();
        if (text && (level === lib.LlamaLogLevel.error || level === lib.LlamaLogLevel.fatal)) log(text);
      },
    });
    model = await llama.loadModel({ modelPath: opts.modelPath });
    const contextSize = opts.contextSize ?? Math.min(model.trainContextSize, DEFAULT_MAX_CONTEXT);
    context = await model.createContext({ contextSize, threads: opts.threads, sequences: 1 });
    const sequence = context.getSequence();
    const chat = new lib.LlamaChat({ contextSequence: sequence });
    return createEngine(opts, { llama, model, context, sequence, chat }, log);
  } catch (err) {
    await context?.dispose().catch(() => undefined);
    await model?.dispose().catch(() => undefined);
    await llama?.dispose().catch(() => undefined);
    if (err instanceof LocalEngineError) throw err;
    throw new LocalEngineError(`cannot load model ${opts.modelPath}: ${(err as Error).message}`, 'load', false);
  }
}

interface Parts {
  llama: Llama;
  model: LlamaModel;
  context: LlamaContext;
  sequence: LlamaContextSequence;
  chat: LlamaChat;
}

function createEngine(opts: EngineOptions, p: Parts, log: (line: string) => void): LocalEngine {
  const queue = new TurnQueue();
  const limits = opts.grammarLimits ?? DEFAULT_GRAMMAR_LIMITS;
  const grammars = new Map<string, Promise<LlamaGrammar>>();
  const stats: EngineStats = { turns: 0, tokens_in: 0, evaluated_in: 0, tokens_out: 0, prompt_ms: 0, generate_ms: 0, queued: 0 };
  const contextSize = p.context.contextSize;
  const meta = p.model.fileInfo.metadata as { general?: { name?: unknown } };
  const modelName = typeof meta.general?.name === 'string' ? meta.general.name : opts.modelPath;
  let closing: Promise<void> | undefined;
  let running: AbortController | undefined;

  function grammarFor(jsonSchema: Record<string, unknown>): Promise<LlamaGrammar> {
    const schema = toGrammarSchema(jsonSchema, limits);
    const key = JSON.stringify(schema);
    let g = grammars.get(key);
    if (!g) {
      if (grammars.size >= GRAMMAR_CACHE_SIZE) grammars.delete(grammars.keys().next().value!);
      g = p.llama.createGrammarForJsonSchema(schema as Parameters<Llama['createGrammarForJsonSchema']>[0]) as Promise<LlamaGrammar>;
      grammars.set(key, g);
      g.catch(() => grammars.delete(key));
    }
    return g;
  }

  async function turn(o: GenerateOptions, signal: AbortSignal, timedOut: () => boolean): Promise<Generation> {
    const t0 = performance.now();
    const history = toHistory(o.messages);
    const promptTokens = p.chat.chatWrapper.generateContextState({ chatHistory: history }).contextText.tokenize(p.model.tokenizer).length;
    const room = contextSize - promptTokens;
    if (room < 1) throw new LocalEngineError(`prompt of ${promptTokens} tokens does not fit the context of ${contextSize} tokens`, 'context_overflow', false);
    if (o.maxTokens !== undefined && o.maxTokens > room) {
      throw new LocalEngineError(`prompt of ${promptTokens} tokens plus max_tokens ${o.maxTokens} exceeds the context of ${contextSize} tokens`, 'context_overflow', false);
    }
    let grammar: LlamaGrammar | undefined;
    if (o.jsonSchema) {
      try {
        grammar = await grammarFor(o.jsonSchema);
      } catch (err) {
        throw new LocalEngineError(`cannot build a grammar for the reply's JSON schema: ${(err as Error).message}`, 'invalid_schema', false);
      }
    }
    if (o.fresh) await p.sequence.clearHistory();
    const before = p.sequence.tokenMeter.getState();
    let firstToken: number | undefined;
    try {
      const r = await p.chat.generateResponse(history, {
        ...(grammar ? { grammar } : {}),
        ...(o.temperature !== undefined ? { temperature: o.temperature } : {}),
        ...(o.topP !== undefined ? { topP: o.topP } : {}),
        ...(o.seed !== undefined ? { seed: o.seed } : {}),
        maxTokens: o.maxTokens ?? room,
        signal,
        onToken: () => {
          firstToken ??= performance.now();
        },
      });
      const after = p.sequence.tokenMeter.getState();
      const end = performance.now();
      const thoughts = r.fullResponse.filter((x): x is Exclude<typeof x, string> => typeof x !== 'string' && x.segmentType === 'thought').map((x) => x.text);
      const gen: Generation = {
        content: r.response,
        ...(thoughts.length ? { reasoning: thoughts.join('\n') } : {}),
        tokens_in: promptTokens,
        tokens_out: after.usedOutputTokens - before.usedOutputTokens,
        evaluated_in: after.usedInputTokens - before.usedInputTokens,
        prompt_ms: (firstToken ?? end) - t0,
        total_ms: end - t0,
        stop_reason: r.metadata.stopReason,
      };
      stats.turns += 1;
      stats.tokens_in += gen.tokens_in;
      stats.evaluated_in += gen.evaluated_in;
      stats.tokens_out += gen.tokens_out;
      stats.prompt_ms += gen.prompt_ms;
      stats.generate_ms += gen.total_ms - gen.prompt_ms;
      return gen;
    } catch (err) {
      if (timedOut()) throw new LocalEngineError(`timeout: no complete reply within ${o.timeoutMs} ms`, 'timeout', true);
      if (o.signal?.aborted) throw new LocalEngineError(`aborted by caller: ${reasonText(o.signal.reason)}`, 'aborted', false);
      if (closing) throw new LocalEngineError('the local model was closed', 'closed', false);
      // E.g. the grammar's own JSON check tripping over a UTF-8 fallback: another sample may pass.
      throw new LocalEngineError(`generation failed: ${(err as Error)?.message ?? String(err)}`, 'generation', true);
    }
  }

  return {
    modelPath: opts.modelPath,
    modelName,
    contextSize,
    threads: opts.threads,
    async generate(o) {
      if (closing) throw new LocalEngineError('the local model was closed', 'closed', false);
      stats.queued = queue.depth + 1;
      try {
        return await queue.run(async () => {
          const ctl = new AbortController();
          running = ctl;
          let timedOut = false;
          const timer = o.timeoutMs === undefined ? undefined : setTimeout(() => ((timedOut = true), ctl.abort(new Error('timeout'))), o.timeoutMs);
          const onAbort = () => ctl.abort(o.signal?.reason);
          o.signal?.addEventListener('abort', onAbort, { once: true });
          try {
            if (o.signal?.aborted) throw new LocalEngineError(`aborted by caller: ${reasonText(o.signal.reason)}`, 'aborted', false);
            return await turn(o, ctl.signal, () => timedOut);
          } finally {
            running = undefined;
            if (timer) clearTimeout(timer);
            o.signal?.removeEventListener('abort', onAbort);
          }
        }, o.signal);
      } catch (err) {
        if (err instanceof LocalEngineError) throw err;
        // Left the queue before its turn: aborted by the caller, or the engine closed.
        if (o.signal?.aborted) throw new LocalEngineError(`aborted by caller: ${reasonText(o.signal.reason)}`, 'aborted', false);
        throw new LocalEngineError(reasonText(err), 'closed', false);
      } finally {
        stats.queued = queue.depth;
      }
    },
    stats: () => ({ ...stats }),
    close() {
      closing ??= (async () => {
        queue.close(new Error('the local model was closed'));
        // The running turn stops at its next token, and must end before its context goes away.
        running?.abort(new Error('the local model was closed'));
        await queue.idle();
        for (const g of grammars.values()) await g.catch(() => undefined);
        await p.context.dispose().catch((e: unknown) => log(`context dispose: ${reasonText(e)}`));
        await p.model.dispose().catch((e: unknown) => log(`model dispose: ${reasonText(e)}`));
        await p.llama.dispose().catch((e: unknown) => log(`llama dispose: ${reasonText(e)}`));
      })();
      return closing;
    },
  };
}

/** Our chat messages as node-llama-cpp history, ending in the empty model turn to fill. */
export function toHistory(messages: readonly ChatMessage[]): ChatHistoryItem[] {
  const history: ChatHistoryItem[] = messages.map((m) =>
    m.role === 'assistant' ? { type: 'model', response: [m.content] } : m.role === 'system' ? { type: 'system', text: m.content } : { type: 'user', text: m.content },
  );
  history.push({ type: 'model', response: [] });
  return history;
}

function reasonText(r: unknown): string {
  return r instanceof Error ? r.message : typeof r === 'string' ? r : 'aborted';
}
