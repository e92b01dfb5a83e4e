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
import { DEFAULT_GRAMMAR_LIMITS, limitsForBudget, toGrammarSchema, type GrammarLimits } from './grammar.js';
import { TurnQueue } from './queue.js';
import { logger } from '../../util/log.js';
import { ReasoningJuryError } from '../../util/errors.js';

const localLog = logger('local');

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
export class LocalEngineError extends ReasoningJuryError {
  override get kind() {
    return 'internal' as const;
  }
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
  const log = opts.log ?? ((line: string) => localLog.warn(line));
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

/** What an engine's turns share: the loaded parts, the grammar cache, counters and whether it is closing. */
interface Core {
  opts: EngineOptions;
  p: Parts;
  log: (line: string) => void;
  queue: TurnQueue;
  limits: GrammarLimits;
  grammars: Map<string, Promise<LlamaGrammar>>;
  stats: EngineStats;
  contextSize: number;
  closing: Promise<void> | undefined;
  /** the turn on the model now: close() stops it before the context goes away */
  running: AbortController | undefined;
}

function createEngine(opts: EngineOptions, p: Parts, log: (line: string) => void): LocalEngine {
  const core: Core = {
    opts,
    p,
    log,
    queue: new TurnQueue(),
    limits: opts.grammarLimits ?? DEFAULT_GRAMMAR_LIMITS,
    grammars: new Map(),
    stats: { turns: 0, tokens_in: 0, evaluated_in: 0, tokens_out: 0, prompt_ms: 0, generate_ms: 0, queued: 0 },
    contextSize: p.context.contextSize,
    closing: undefined,
    running: undefined,
  };
  const meta = p.model.fileInfo.metadata as { general?: { name?: unknown } };
  const modelName = typeof meta.general?.name === 'string' ? meta.general.name : opts.modelPath;
  return {
    modelPath: opts.modelPath,
    modelName,
    contextSize: core.contextSize,
    threads: opts.threads,
    generate: (o) => generate(core, o),
    stats: () => ({ ...core.stats }),
    close: () => closeEngine(core),
  };
}

/**
 * Grammars are costly to build: keep the last few, keyed by the schema they enforce. Caps are
 * sized from the turn's max_tokens, so the longest reply the grammar allows still closes
 * within it (in-process and serve-local alike: both come through here).
 */
function grammarFor(core: Core, jsonSchema: Record<string, unknown>, maxTokens: number | undefined): Promise<LlamaGrammar> {
  const { grammars } = core;
  const schema = toGrammarSchema(jsonSchema, limitsForBudget(jsonSchema, maxTokens, core.limits));
  const key = JSON.stringify(schema);
  let g = grammars.get(key);
  if (!g) {
    if (grammars.size >= GRAMMAR_CACHE_SIZE) grammars.delete(grammars.keys().next().value!);
    g = core.p.llama.createGrammarForJsonSchema(schema as Parameters<Llama['createGrammarForJsonSchema']>[0]) as Promise<LlamaGrammar>;
    grammars.set(key, g);
    g.catch(() => grammars.delete(key));
  }
  return g;
}

/** The prompt's tokens and the room left for the reply; a prompt that leaves none fails clearly. */
function promptRoom(core: Core, history: ChatHistoryItem[], maxTokens: number | undefined): { promptTokens: number; room: number } {
  const { p, contextSize } = core;
  const promptTokens = p.chat.chatWrapper.generateContextState({ chatHistory: history }).contextText.tokenize(p.model.tokenizer).length;
  const room = contextSize - promptTokens;
  if (room < 1) throw new LocalEngineError(`prompt of ${promptTokens} tokens does not fit the context of ${contextSize} tokens`, 'context_overflow', false);
  if (maxTokens !== undefined && maxTokens > room) {
    throw new LocalEngineError(`prompt of ${promptTokens} tokens plus max_tokens ${maxTokens} exceeds the context of ${contextSize} tokens`, 'context_overflow', false);
  }
  return { promptTokens, room };
}

async function grammarOf(core: Core, jsonSchema: Record<string, unknown> | undefined, maxTokens: number | undefined): Promise<LlamaGrammar | undefined> {
  if (!jsonSchema) return undefined;
  try {
    return await grammarFor(core, jsonSchema, maxTokens);
  } catch (err) {
    throw new LocalEngineError(`cannot build a grammar for the reply's JSON schema: ${(err as Error).message}`, 'invalid_schema', false);
  }
}

type TokenMeterState = ReturnType<LlamaContextSequence['tokenMeter']['getState']>;
type ChatResponse = Awaited<ReturnType<LlamaChat['generateResponse']>>;

/** The reply and its measures; `firstToken` is when the first token came (the prompt's end). */
function toGeneration(r: ChatResponse, promptTokens: number, before: TokenMeterState, after: TokenMeterState, times: { t0: number; firstToken: number | undefined; end: number }): Generation {
  const { t0, firstToken, end } = times;
  const thoughts = r.fullResponse.filter((x): x is Exclude<typeof x, string> => typeof x !== 'string' && x.segmentType === 'thought').map((x) => x.text);
  return {
    content: r.response,
    ...(thoughts.length ? { reasoning: thoughts.join('\n') } : {}),
    tokens_in: promptTokens,
    tokens_out: after.usedOutputTokens - before.usedOutputTokens,
    evaluated_in: after.usedInputTokens - before.usedInputTokens,
    prompt_ms: (firstToken ?? end) - t0,
    total_ms: end - t0,
    stop_reason: r.metadata.stopReason,
  };
}

function countTurn(stats: EngineStats, gen: Generation): void {
  stats.turns += 1;
  stats.tokens_in += gen.tokens_in;
  stats.evaluated_in += gen.evaluated_in;
  stats.tokens_out += gen.tokens_out;
  stats.prompt_ms += gen.prompt_ms;
  stats.generate_ms += gen.total_ms - gen.prompt_ms;
}

/** Why a generation stopped: our timeout, the caller, close(), or (retryable) the model itself. */
function turnError(core: Core, o: GenerateOptions, timedOut: boolean, err: unknown): LocalEngineError {
  if (timedOut) return new LocalEngineError(`timeout: no complete reply within ${o.timeoutMs} ms`, 'timeout', true);
  if (o.signal?.aborted) return new LocalEngineError(`aborted by caller: ${reasonText(o.signal.reason)}`, 'aborted', false);
  if (core.closing) return new LocalEngineError('the local model was closed', 'closed', false);
  // E.g. the grammar's own JSON check tripping over a UTF-8 fallback: another sample may pass.
  return new LocalEngineError(`generation failed: ${(err as Error)?.message ?? String(err)}`, 'generation', true);
}

/** One turn on the model, run when the queue reaches it. */
async function turn(core: Core, o: GenerateOptions, signal: AbortSignal, timedOut: () => boolean): Promise<Generation> {
  const { p } = core;
  const t0 = performance.now();
  const history = toHistory(o.messages);
  const { promptTokens, room } = promptRoom(core, history, o.maxTokens);
  const grammar = await grammarOf(core, o.jsonSchema, o.maxTokens);
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
    const gen = toGeneration(r, promptTokens, before, after, { t0, firstToken, end: performance.now() });
    countTurn(core.stats, gen);
    return gen;
  } catch (err) {
    throw turnError(core, o, timedOut(), err);
  }
}

/** A queued turn with its own abort: the caller's signal, its timeout (run time only) and close(). */
async function runTimed(core: Core, o: GenerateOptions): Promise<Generation> {
  const ctl = new AbortController();
  core.running = ctl;
  let timedOut = false;
  const timer = o.timeoutMs === undefined ? undefined : setTimeout(() => ((timedOut = true), ctl.abort(new Error('timeout'))), o.timeoutMs);
  const onAbort = () => ctl.abort(o.signal?.reason);
  o.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    if (o.signal?.aborted) throw new LocalEngineError(`aborted by caller: ${reasonText(o.signal.reason)}`, 'aborted', false);
    return await turn(core, o, ctl.signal, () => timedOut);
  } finally {
    core.running = undefined;
    if (timer) clearTimeout(timer);
    o.signal?.removeEventListener('abort', onAbort);
  }
}

async function generate(core: Core, o: GenerateOptions): Promise<Generation> {
  if (core.closing) throw new LocalEngineError('the local model was closed', 'closed', false);
  core.stats.queued = core.queue.depth + 1;
  try {
    return await core.queue.run(() => runTimed(core, o), o.signal);
  } catch (err) {
    if (err instanceof LocalEngineError) throw err;
    // Left the queue before its turn: aborted by the caller, or the engine closed.
    if (o.signal?.aborted) throw new LocalEngineError(`aborted by caller: ${reasonText(o.signal.reason)}`, 'aborted', false);
    throw new LocalEngineError(reasonText(err), 'closed', false);
  } finally {
    core.stats.queued = core.queue.depth;
  }
}

function closeEngine(core: Core): Promise<void> {
  const { p, log } = core;
  core.closing ??= (async () => {
    core.queue.close(new Error('the local model was closed'));
    // The running turn stops at its next token, and must end before its context goes away.
    core.running?.abort(new Error('the local model was closed'));
    await core.queue.idle();
    for (const g of core.grammars.values()) await g.catch(() => undefined);
    await p.context.dispose().catch((e: unknown) => log(`context dispose: ${reasonText(e)}`));
    await p.model.dispose().catch((e: unknown) => log(`model dispose: ${reasonText(e)}`));
    await p.llama.dispose().catch((e: unknown) => log(`llama dispose: ${reasonText(e)}`));
  })();
  return core.closing;
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
