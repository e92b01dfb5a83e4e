/**
 * The batch provider: a Provider whose `complete` puts the request in its model's collector
 * (./collector.ts) and resolves when the request's batch has its result, so the gateway's
 * layers (retry, cache, ledger, audit) and the jury see an ordinary, slow call.
 *
 *   complete(req, key) ── result in the journal? ── served at once (a re-run after a stop)
 *        │                waiting already? ──────── joins that request (one batch line per key)
 *        ▼
 *   collector ── cut ──▶ upload, journal `uploaded`, create, journal state ──▶ poll
 *                                                                              │ over
 *                        journal results ◀── output + error files ◀────────────┘
 *                              │
 *                              ▼ each waiting call: its reply, or a ProviderError
 *
 * A request whose line failed (error file, `batch_expired`, a 5xx line) or that has no line
 * fails retryable: the retry layer asks again and it goes out in a new batch, alone with the
 * other retried ones. A key is never submitted while a batch holding it is alive, in this run or
 * (through the journal) the one before.
 */
import type { EndpointConfig, EndpointBatchConfig } from '../../../../schemas/config.js';
import { logger } from '../../../util/log.js';
import type { Redactor } from '../../../util/redact.js';
import { ProviderError, type ChatRequest, type ChatResponse, type CompletionContext, type Provider } from '../../types.js';
import { Collector, type PendingLine } from './collector.js';
import { entryKey, isOver, readEntries, writeEntry, type JournalEntry, type JournalStore } from './journal.js';
import { parseResultFile, requestLine, storeResult, type LineResult } from './lines.js';
import { BatchGoneError, type BatchDialect, type BatchInfo } from './openai-dialect.js';
import { setTimeout as sleep } from 'node:timers/promises';

export const BATCH_DEFAULTS: Omit<EndpointBatchConfig, 'dialect'> = { max_requests: 50_000, max_bytes: 190 * 1024 * 1024, quiet_ms: 2000, poll_interval_ms: 30_000, completion_window: '24h' };

/** Progress of one endpoint's batches (this run; re-attached batches count as in progress). */
export interface BatchStats {
  submitted: number;
  in_progress: number;
  completed: number;
  /** over without (all) results: failed, expired, cancelled, lost */
  failed: number;
  /** requests sent in batches this run */
  requests_submitted: number;
  /** calls answered from the journal (results of batches a stopped run had submitted) */
  served_from_journal: number;
  /** distinct requests waiting (in a collector or a batch not over) */
  waiting: number;
  /** ms the longest-waiting request has waited (0 when none) */
  oldest_wait_ms: number;
}

export interface BatchProvider extends Provider {
  readonly batched: true;
  stats(): BatchStats;
}

interface Waiter {
  resolve(r: ChatResponse): void;
  reject(e: Error): void;
}

interface Waiting {
  since: number;
  waiters: Set<Waiter>;
  /** still in the collector of this model (not cut yet) */
  collecting?: string;
}

export interface BatchProviderOptions {
  journal: JournalStore;
  dialect: BatchDialect;
  redactor: Redactor;
  now?: () => number;
}

export function createBatchProvider(name: string, endpoint: EndpointConfig, opts: BatchProviderOptions): BatchProvider {
  return new BatchRunner(name, endpoint, opts).provider();
}

const log = logger('llm');

class BatchRunner {
  private readonly settings: Omit<EndpointBatchConfig, 'dialect'>;
  private readonly waiting = new Map<string, Waiting>();
  private readonly kept = new Map<string, ChatResponse>();
  private readonly collectors = new Map<string, Collector>();
  private readonly live = new Set<string>();
  private readonly closing = new AbortController();
  private readonly now: () => number;
  private started: Promise<void> | undefined;
  private readonly counts = { submitted: 0, completed: 0, failed: 0, requests_submitted: 0, served_from_journal: 0 };

  constructor(
    private readonly name: string,
    private readonly endpoint: EndpointConfig,
    private readonly opts: BatchProviderOptions,
  ) {
    this.settings = { ...BATCH_DEFAULTS, ...endpoint.batch };
    this.now = opts.now ?? Date.now;
  }

  provider(): BatchProvider {
    return {
      name: this.name,
      batched: true,
      complete: (req, signal, ctx) => this.complete(req, signal, ctx),
      stats: () => this.stats(),
      close: async () => this.close(),
    };
  }

  private async complete(req: ChatRequest, signal: AbortSignal, ctx: CompletionContext | undefined): Promise<ChatResponse> {
    if (!ctx) throw new ProviderError(`endpoint "${this.name}": a batched call needs its request key`, false);
    await (this.started ??= this.resume());
    if (signal.aborted) throw abortError(signal);
    const done = this.kept.get(ctx.key);
    if (done) {
      this.kept.delete(ctx.key);
      this.counts.served_from_journal += 1;
      return done;
    }
    return new Promise<ChatResponse>((resolve, reject) => {
      const w = this.waiting.get(ctx.key) ?? this.enqueue(ctx.key, req);
      const waiter: Waiter = { resolve, reject };
      w.waiters.add(waiter);
      const onAbort = () => this.abandon(ctx.key, waiter, signal);
      signal.addEventListener('abort', onAbort, { once: true });
      const drop = () => signal.removeEventListener('abort', onAbort);
      waiter.resolve = (r) => (drop(), resolve(r));
      waiter.reject = (e) => (drop(), reject(e));
    });
  }

  private enqueue(key: string, req: ChatRequest): Waiting {
    const w: Waiting = { since: this.now(), waiters: new Set(), collecting: req.model };
    this.waiting.set(key, w);
    this.collectorOf(req.model).add(key, requestLine(key, req, this.endpoint));
    return w;
  }

  private abandon(key: string, waiter: Waiter, signal: AbortSignal): void {
    const w = this.waiting.get(key);
    if (!w) return;
    w.waiters.delete(waiter);
    waiter.reject(abortError(signal));
    // Cut already: the line is in a batch, which a later ask of the same key waits for.
    if (w.waiters.size === 0 && w.collecting !== undefined && this.collectorOf(w.collecting).remove(key)) this.waiting.delete(key);
  }

  private collectorOf(model: string): Collector {
    let c = this.collectors.get(model);
    if (!c) {
      const limits = { maxRequests: this.settings.max_requests, maxBytes: this.settings.max_bytes, quietMs: this.settings.quiet_ms };
      c = new Collector(limits, (lines) => void this.submit(model, lines));
      this.collectors.set(model, c);
    }
    return c;
  }

  /** Reads the journal once: finished batches' replies are kept, live ones are polled again. */
  private async resume(): Promise<void> {
    const entries = await readEntries(this.opts.journal, this.name);
    for (const e of entries) {
      if (isOver(e.state)) {
        for (const [key, r] of Object.entries(e.results ?? {})) if (r.ok) this.kept.set(key, r.response);
        continue;
      }
      for (const key of e.custom_ids) if (!this.waiting.has(key)) this.waiting.set(key, { since: this.now(), waiters: new Set() });
      log.info(`endpoint "${this.name}": re-attaching to batch ${e.batch_id ?? `of input file ${e.input_file_id}`} (${e.custom_ids.length} requests, ${e.state})`, { endpoint: this.name });
      void this.watch(e);
    }
  }

  private async submit(model: string, lines: PendingLine[]): Promise<void> {
    for (const l of lines) delete this.waiting.get(l.key)?.collecting;
    const keys = lines.map((l) => l.key);
    const signal = this.closing.signal;
    let entry: JournalEntry | undefined;
    try {
      const fileId = await this.opts.dialect.upload(lines.map((l) => l.line).join(''), signal);
      entry = { format: 1, dialect: this.opts.dialect.name, endpoint: this.name, model, input_file_id: fileId, custom_ids: keys, state: 'uploaded', submitted_at: new Date(this.now()).toISOString() };
      await writeEntry(this.opts.journal, entry);
      const info = await this.opts.dialect.create(fileId, signal);
      entry = { ...entry, batch_id: info.id, state: info.state, ...(info.paths ? { paths: info.paths } : {}) };
      await writeEntry(this.opts.journal, entry);
      this.counts.submitted += 1;
      this.counts.requests_submitted += keys.length;
      log.info(`endpoint "${this.name}": batch ${info.id} submitted (${keys.length} requests, model ${model})`, { endpoint: this.name, batch: info.id });
    } catch (err) {
      // A create whose reply was lost (a reset, a proxy's 502) may have been carried out: adopt
      // that batch rather than submit its requests again and pay for them twice.
      const adopted = entry && entry.batch_id === undefined && !signal.aborted ? await this.adopt(entry, keys.length, signal) : undefined;
      if (adopted) return void (await this.watch(adopted));
      if (entry) await writeEntry(this.opts.journal, { ...entry, state: 'failed', finished_at: new Date(this.now()).toISOString() }).catch(() => undefined);
      const e = err instanceof ProviderError ? err : new ProviderError(`batch submission failed: ${(err as Error).message}`, true);
      for (const key of keys) this.settle(key, { ok: false, error: e });
      return;
    }
    await this.watch(entry);
  }

  /** The batch the server made of an uploaded entry's file despite a failed create, recorded; undefined if none (or it cannot tell). */
  private async adopt(entry: JournalEntry, requests: number, signal: AbortSignal): Promise<JournalEntry | undefined> {
    const found = await this.opts.dialect.findByInputFile(entry.input_file_id, signal).catch(() => undefined);
    if (!found) return undefined;
    const adopted: JournalEntry = { ...entry, batch_id: found.id, state: found.state };
    await writeEntry(this.opts.journal, adopted);
    this.counts.submitted += 1;
    this.counts.requests_submitted += requests;
    log.info(`endpoint "${this.name}": batch ${found.id} was created although its create call failed; waiting for it`, { endpoint: this.name, batch: found.id });
    return adopted;
  }

  /** Polls a batch until it is over, then records and hands out its results. */
  private async watch(entry: JournalEntry): Promise<void> {
    const signal = this.closing.signal;
    this.live.add(entryKey(entry));
    try {
      let info = await this.attach(entry, signal);
      while (info && !isOver(info.state)) {
        await sleep(this.settings.poll_interval_ms, undefined, { signal });
        info = await this.poll(info.id, signal);
      }
      await this.finish(entry, info, signal);
    } catch (err) {
      // Closing: the batch stays in the journal for the next run.
      if (!signal.aborted) log.warn(`endpoint "${this.name}": batch ${entry.batch_id ?? entry.input_file_id}: ${(err as Error).message}`, { endpoint: this.name });
    } finally {
      this.live.delete(entryKey(entry));
    }
  }

  /** The batch of an entry as the server knows it now; undefined when it does not (lost). */
  private async attach(entry: JournalEntry, signal: AbortSignal): Promise<BatchInfo | undefined> {
    if (entry.batch_id === undefined) {
      const found = await this.opts.dialect.findByInputFile(entry.input_file_id, signal);
      if (found) await writeEntry(this.opts.journal, { ...entry, batch_id: found.id, state: found.state });
      if (found) entry.batch_id = found.id;
      return found;
    }
    return this.poll(entry.batch_id, signal);
  }

  /** One status check; a failed check is tried again at the next interval, a 404 means lost. */
  private async poll(batchId: string, signal: AbortSignal): Promise<BatchInfo | undefined> {
    for (;;) {
      try {
        return await this.opts.dialect.retrieve(batchId, signal);
      } catch (err) {
        if (err instanceof BatchGoneError) return undefined;
        if (signal.aborted) throw err;
        log.warn(`endpoint "${this.name}": status of batch ${batchId} not read (${(err as Error).message}); trying again`, { endpoint: this.name });
        await sleep(this.settings.poll_interval_ms, undefined, { signal });
      }
    }
  }

  private async finish(entry: JournalEntry, info: BatchInfo | undefined, signal: AbortSignal): Promise<void> {
    const results = new Map<string, LineResult>();
    for (const fileId of [info?.output_file_id, info?.error_file_id]) {
      if (fileId === undefined) continue;
      for (const [k, r] of parseResultFile(await this.opts.dialect.download(fileId, signal), this.opts.redactor, this.name)) results.set(k, r);
    }
    const state = info?.state ?? 'lost';
    const stored = Object.fromEntries([...results].map(([k, r]) => [k, storeResult(r)]));
    // Results are on record before any call sees them: a stop from here on pays for nothing twice.
    await writeEntry(this.opts.journal, { ...entry, state, finished_at: new Date(this.now()).toISOString(), results: stored });
    const missing = new ProviderError(`no result for this request in batch ${entry.batch_id ?? entry.input_file_id} (${state}${info?.errors ? `: ${info.errors}` : ''})`, state !== 'cancelled');
    let complete = true;
    for (const key of entry.custom_ids) {
      const r = results.get(key) ?? { ok: false as const, error: missing };
      if (!r.ok) complete = false;
      this.settle(key, r);
    }
    if (state === 'completed' && complete) this.counts.completed += 1;
    else this.counts.failed += 1;
    log.info(`endpoint "${this.name}": batch ${entry.batch_id ?? entry.input_file_id} ${state} (${results.size} of ${entry.custom_ids.length} results)`, { endpoint: this.name });
  }

  private settle(key: string, r: LineResult): void {
    const w = this.waiting.get(key);
    this.waiting.delete(key);
    // Nobody asks yet (a batch re-attached before its records were read again): kept for them.
    if ((!w || w.waiters.size === 0) && r.ok) this.kept.set(key, r.response);
    for (const waiter of w?.waiters ?? []) {
      if (r.ok) waiter.resolve(r.response);
      else waiter.reject(r.error);
    }
  }

  private stats(): BatchStats {
    let oldest = 0;
    for (const w of this.waiting.values()) {
      oldest = this.now() - w.since;
      break; // insertion order: the first is the oldest
    }
    return { ...this.counts, in_progress: this.live.size, waiting: this.waiting.size, oldest_wait_ms: Math.max(0, oldest) };
  }

  private close(): void {
    this.closing.abort(new Error('gateway closed'));
    for (const c of this.collectors.values()) c.close();
  }
}

function abortError(signal: AbortSignal): ProviderError {
  const r: unknown = signal.reason;
  return new ProviderError(`aborted by caller: ${r instanceof Error ? r.message : typeof r === 'string' ? r : 'aborted'}`, false);
}
