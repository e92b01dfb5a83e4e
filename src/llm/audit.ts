/**
 * Append-only JSONL audit log: one line per HTTP attempt and per cache hit (paper App. L: every
 * LLM call is logged with caller, phase, model, prompts, response, reasoning and usage). Every
 * line goes through the redactor before it touches the disk.
 */
import { appendFile, mkdir, open, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Phase } from '../../schemas/usage.js';
import type { FinishReason } from './finish-reason.js';
import type { Redactor } from '../util/redact.js';
import type { ChatMessage } from './types.js';

/**
 * ok: usable reply. retryable_error: failed, will be retried. error: failed for good.
 * reask: reply was not valid JSON for the schema and a corrective re-ask follows.
 * invalid_json: the re-ask's reply was still invalid (the call fails). cache_hit: no HTTP at all.
 * truncated: reply cut at max_tokens, asked again once with a larger budget (turn
 * `larger_budget`); a cut reply that is not asked again is an `error`, `truncated at max_tokens (N)`.
 */
export type AuditOutcome = 'ok' | 'retryable_error' | 'error' | 'invalid_json' | 'reask' | 'truncated' | 'cache_hit';

/** The sampling settings an attempt was sent with; absent fields were not sent. */
export interface AuditSampling {
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
  seed?: number;
  reasoning_effort?: string;
  /** how structured output was asked for: `none`, or the endpoint's response_format kind */
  response_format: string;
}

export interface AuditEntry {
  ts: string;
  caller: string;
  phase: Phase;
  participant: string;
  record_id: string;
  sample_index?: number;
  model: string;
  endpoint: string;
  /** "text" or "structured:<schemaName>" */
  kind: string;
  /** "initial", "reask" (the corrective turn) or "larger_budget" (a cut turn asked again); absent for cache hits */
  turn?: 'initial' | 'reask' | 'larger_budget';
  prompt_hash: string;
  messages: ChatMessage[];
  response: string | null;
  reasoning: string | null;
  usage: { tokens_in: number; tokens_out: number } | null;
  /** from the attempt's dispatch to the endpoint until its reply or failure; our own queue excluded */
  latency_ms: number;
  /** how long the attempt waited for a slot in our own limiter (max_concurrency, requests_per_second) first */
  queue_ms?: number;
  /** 1-based HTTP attempt number within the logical call (0 for cache hits) */
  attempt: number;
  outcome: AuditOutcome;
  http_status?: number;
  error: string | null;
  /** why the reply ended, on lines that carry one (ok, reask, invalid_json, truncated, cache_hit) */
  finish_reason?: FinishReason;
  /** what the attempt was sent with (absent for cache hits: nothing was sent) */
  sampling?: AuditSampling;
}

export interface AuditLog {
  /** false for the null log: callers skip building entries (prompt hashing is not free). */
  readonly enabled: boolean;
  write(entry: AuditEntry): Promise<void>;
  /** Flushes and closes; rethrows the first write failure so a broken audit trail is not silent. */
  close(): Promise<void>;
}

export const nullAuditLog: AuditLog = { enabled: false, write: async () => undefined, close: async () => undefined };

export function createAuditLog(path: string | null, redactor: Redactor): AuditLog {
  if (path === null) return nullAuditLog;
  let handle: Promise<FileHandle> | null = null;
  let chain: Promise<void> = Promise.resolve();
  let failure: unknown = null;
  let closed = false;
  const file = () => (handle ??= mkdir(dirname(path), { recursive: true }).then(() => open(path, 'a')));
  return {
    enabled: true,
    write(entry) {
      const line = `${JSON.stringify(redactor.deep(entry))}\n`;
      // A call aborted by Gateway.close() can report its attempt after the log was closed: that
      // line still goes to the file, through an append that opens and closes it, so no handle
      // is left open (Node 26 fails the process when one is left to the garbage collector).
      const late = closed;
      // One writer, one queue: concurrent calls never interleave bytes within a line.
      chain = chain.then(async () => {
        try {
          if (late) await appendFile(path, line, 'utf8');
          else await (await file()).appendFile(line, 'utf8');
        } catch (err) {
          failure ??= err;
        }
      });
      return chain;
    },
    async close() {
      closed = true;
      // In the queue, after every line written before close(): none of them meets a closed handle.
      chain = chain.then(async () => {
        const h = handle;
        handle = null;
        if (h) await h.then((fh) => fh.close()).catch(() => undefined);
      });
      await chain;
      if (failure) {
        const err = failure;
        failure = null;
        // The code (ENOSPC, EACCES) and path go along: the fatal line names them and what to do.
        const { code } = err as NodeJS.ErrnoException;
        throw err instanceof Error ? Object.assign(new Error(`audit log ${path}: ${redactor.text(err.message)}`), { path, ...(code ? { code } : {}) }) : err;
      }
    },
  };
}
