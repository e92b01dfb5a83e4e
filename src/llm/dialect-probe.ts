/**
 * `response_format: auto`: the endpoint's dialect is found once, by asking the server a tiny
 * structured question in each candidate dialect, best first (./dialect.ts AUTO_ORDER). The first
 * dialect whose reply is accepted and follows the probe's schema wins; one accepted but not
 * followed (JSON mode has no schema) is kept as a fallback; a server that rejects them all gets
 * `none`. One line in the log says which, and why the better ones lost.
 *
 * The answer belongs to the endpoint, so every seat on it shares one probe. A probe that fails
 * for reasons that say nothing about dialects (refused connection, timeout, a 5xx that names
 * no field) is no verdict: the call that triggered it fails with that error, so the retry and
 * health layers treat it as any other outage, and the next call probes again.
 */
import { z } from 'zod';
import { parseStructured } from './json.js';
import { AUTO_ORDER, dialectFields, type Dialect, type ResponseFormatSetting } from './dialect.js';
import { isFormatField, isRejectedField, RejectedFieldError } from './rejection.js';
import { abortReason } from './retry.js';
import { PROBE_PROMPT, ProviderError } from './types.js';
import type { Logger } from '../util/log.js';

const PROBE_REPLY = z.object({ ok: z.boolean() });
export const PROBE_SCHEMA = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'], additionalProperties: false };
export { PROBE_PROMPT };
/** Enough for `{"ok": true}` with some whitespace in any tokenizer, little enough to cost nothing. */
export const PROBE_MAX_TOKENS = 32;

/**
 * Sends one probe request with these extra body fields, bounded by the endpoint's timeout;
 * resolves to the reply's text, throws the ProviderError any call would get.
 */
export type ProbeSend = (fields: Record<string, unknown>, model: string, signal: AbortSignal) => Promise<string>;

export interface DialectResolverOptions {
  endpoint: string;
  setting: ResponseFormatSetting;
  send: ProbeSend;
  log: Logger;
}

export interface DialectResolver {
  /** The dialect for a structured call to `model`; probes once under `auto`. */
  dialect(model: string, signal: AbortSignal): Promise<Dialect>;
  close(): void;
}

export function createDialectResolver(opts: DialectResolverOptions): DialectResolver {
  const closing = new AbortController();
  let found: Promise<Dialect> | null = null;
  return {
    dialect(model, signal) {
      if (opts.setting !== 'auto') return Promise.resolve(opts.setting);
      if (!found) {
        const p = probeDialects(opts, model, closing.signal);
        found = p;
        // No verdict (outage, shutdown): forget it, so the next call asks again.
        p.catch(() => {
          if (found === p) found = null;
        });
      }
      return untilAborted(found, signal);
    },
    close: () => closing.abort(new Error('provider closed')),
  };
}

async function probeDialects(opts: DialectResolverOptions, model: string, closing: AbortSignal): Promise<Dialect> {
  const lost: string[] = [];
  let fallback: Dialect | null = null;
  for (const d of AUTO_ORDER) {
    let text: string;
    try {
      text = await opts.send(dialectFields(d, PROBE_SCHEMA), model, closing);
    } catch (err) {
      if (!isDialectVerdict(err)) throw probeFailure(err, opts.endpoint);
      lost.push(`${d}: rejected, ${brief(err)}`);
      continue;
    }
    const r = parseStructured(text, PROBE_REPLY);
    if (r.ok && !r.repaired) return chosen(opts, d, lost);
    fallback ??= d;
    lost.push(`${d}: accepted, reply did not follow the schema`);
  }
  return chosen(opts, fallback ?? 'none', lost);
}

function chosen(opts: DialectResolverOptions, d: Dialect, lost: string[]): Dialect {
  const why = lost.length > 0 ? ` (${lost.join('; ')})` : '';
  opts.log.info(`endpoint "${opts.endpoint}": response_format auto chose ${d}${why}`, { endpoint: opts.endpoint, dialect: d });
  return d;
}

/** The server looked at the request and refused its format field (or an unnamed part of it): that dialect is out. */
function isDialectVerdict(err: unknown): boolean {
  if (isRejectedField(err)) return isFormatField(err.field);
  return err instanceof ProviderError && !err.reach && (err.status === 400 || err.status === 422);
}

/** A probe refused for another field (say `max_tokens`): the probe itself is the cause, so say so. */
function probeFailure(err: unknown, endpoint: string): unknown {
  if (!isRejectedField(err)) return err;
  const setting = `endpoints.${endpoint}.response_format`;
  const message = `HTTP ${err.status}: the server rejected request field "${err.field}" of the response_format auto probe (not retried); set ${setting} to the server's dialect instead of auto. Server said: ${err.said}`;
  return new RejectedFieldError(message, err.status!, err.field, setting, err.said);
}

function brief(err: unknown): string {
  const e = err as ProviderError;
  const field = isRejectedField(e) ? ` "${e.field}"` : '';
  return `HTTP ${e.status ?? '?'}${field}`;
}

function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
