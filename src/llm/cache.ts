/**
 * On-disk response cache. One file per successful logical call, sharded by key prefix so no
 * directory grows huge. A hit replays the call exactly as first recorded (text, reasoning and
 * usage), which is what makes a re-run produce byte-identical verdicts.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CallUsage } from '../../schemas/usage.js';
import { isFinishReason, type FinishReason } from './finish-reason.js';
import type { ChatMessage, ChatRequest } from './types.js';

/** Bump when the key material or the entry layout changes, so old entries stop matching. */
export const CACHE_FORMAT = 1;

/** JSON with object keys sorted and undefined dropped: equal inputs give equal bytes. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => (v === undefined ? null : sortKeys(v)));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(value).sort()) {
    const v = (value as Record<string, unknown>)[k];
    if (v !== undefined) out[k] = sortKeys(v);
  }
  return out;
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Hash of the messages alone (role + content, in order). */
export function hashMessages(messages: ChatMessage[]): string {
  return sha256(canonicalJson(messages.map((m) => ({ role: m.role, content: m.content }))));
}

export interface CacheKeyInput {
  base_url: string;
  request: ChatRequest;
  sample_index?: number;
  /** "text" or "structured:<schemaName>" */
  kind: string;
}

export function cacheKey(input: CacheKeyInput): string {
  const r = input.request;
  return sha256(
    canonicalJson({
      v: CACHE_FORMAT,
      base_url: input.base_url,
      model: r.model,
      sampling: { temperature: r.temperature, top_p: r.top_p, max_tokens: r.max_tokens, seed: r.seed, reasoning_effort: r.reasoning_effort, extra_body: r.extra_body },
      prompt_hash: hashMessages(r.messages),
      sample_index: input.sample_index ?? 0,
      kind: input.kind,
    }),
  );
}

export interface CacheEntry {
  raw: string;
  reasoning?: string;
  usage: CallUsage;
  /** stored only when not `stop`, so entries stay byte-identical to those older code wrote; absent = stop */
  finish_reason?: FinishReason;
}

export interface ResponseCache {
  readonly enabled: boolean;
  get(key: string): Promise<CacheEntry | null>;
  put(key: string, entry: CacheEntry): Promise<void>;
  pathFor(key: string): string;
}

export function createResponseCache(opts: { enabled: boolean; dir: string }): ResponseCache {
  const pathFor = (key: string) => join(opts.dir, key.slice(0, 2), `${key}.json`);
  return {
    enabled: opts.enabled,
    pathFor,
    async get(key) {
      if (!opts.enabled) return null;
      let text: string;
      try {
        text = await readFile(pathFor(key), 'utf8');
      } catch {
        return null;
      }
      return decode(text);
    },
    async put(key, entry) {
      if (!opts.enabled) return;
      const file = pathFor(key);
      await mkdir(join(opts.dir, key.slice(0, 2)), { recursive: true });
      // Temp file + rename: a reader (or a crash) never sees half an entry.
      const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
      const finish = entry.finish_reason === 'stop' ? undefined : entry.finish_reason;
      const body = JSON.stringify({ format: CACHE_FORMAT, key, raw: entry.raw, reasoning: entry.reasoning, usage: entry.usage, finish_reason: finish });
      try {
        await writeFile(tmp, body, 'utf8');
        await rename(tmp, file);
      } catch (err) {
        await rm(tmp, { force: true }).catch(() => undefined);
        throw err;
      }
    },
  };
}

/** A damaged or foreign file is a miss, not a crash: the call is simply made again. */
function decode(text: string): CacheEntry | null {
  let obj: unknown;
  try {
    obj = JSON.parse(text);
  } catch {
    return null;
  }
  if (!obj || typeof obj !== 'object') return null;
  const o = obj as Record<string, unknown>;
  if (o.format !== CACHE_FORMAT || typeof o.raw !== 'string') return null;
  const usage = CallUsage.safeParse(o.usage);
  if (!usage.success) return null;
  return {
    raw: o.raw,
    ...(typeof o.reasoning === 'string' ? { reasoning: o.reasoning } : {}),
    usage: usage.data,
    ...(isFinishReason(o.finish_reason) ? { finish_reason: o.finish_reason } : {}),
  };
}
