/**
 * A fatal error as one line a person can act on: the messages of the error and its causes
 * joined once (never `Error: Error: ...`), the fields that say what failed (key, path, range,
 * endpoint, ...) when the message does not already name them, and a hint of what to do. The
 * stack is kept aside for `--debug`.
 */

export interface ErrorReport {
  /** one line: the error's message, then each cause's that adds something */
  message: string;
  /** what failed, from the error and its causes (the outer error wins a clash) */
  fields: Record<string, string | number>;
  /** what to do about it */
  hint?: string;
  /** stacks of the error and its causes, for --debug */
  stack?: string;
}

/**
 * Properties typed errors carry (StorageError: store, op, key, range; endpoint outages:
 * endpoint; Node system errors: path, address, port, syscall, code).
 */
const FIELDS = ['store', 'op', 'key', 'path', 'dest', 'range', 'unit', 'record_id', 'endpoint', 'url', 'address', 'port', 'syscall', 'code'] as const;

/** What to do, by Node error code, when the error brings no hint of its own. */
const HINTS: Record<string, string> = {
  ENOSPC: 'free space on that device, then run the same command again (committed ranges are skipped)',
  EDQUOT: 'raise the quota or free space, then run the same command again (committed ranges are skipped)',
  EACCES: 'check the permissions of that path',
  EPERM: 'check the permissions of that path',
  EROFS: 'the file system is read-only: write the output somewhere else',
  ENOENT: 'check that the path exists',
  ENOTDIR: 'part of that path is a file, not a folder',
  EISDIR: 'that path is a folder; give a file',
  EMFILE: 'too many open files: raise the limit (ulimit -n) or lower --concurrency',
  ECONNREFUSED: 'check that the service is up and reachable, then run the same command again',
  ECONNRESET: 'the connection was dropped: check the service, then run the same command again',
  ETIMEDOUT: 'check that the service is up and reachable, then run the same command again',
  ENOTFOUND: 'check the host name',
  EAI_AGAIN: 'name resolution failed: check DNS and the host name',
  EHOSTUNREACH: 'check the network route to the service',
};

const MAX_CAUSES = 8;

/** Error names at the start of a message, put there by code that stringified an error. */
const NAME_PREFIX = /^(?:[A-Z][A-Za-z]*Error: |Error: )+/;

/** The error, then its `cause`s (AggregateError: its first error), without cycles. */
function chainOf(err: unknown): unknown[] {
  const chain: unknown[] = [];
  let at: unknown = err;
  while (at !== undefined && at !== null && chain.length < MAX_CAUSES && !chain.includes(at)) {
    chain.push(at);
    const e = at as { cause?: unknown; errors?: unknown[] };
    at = e.cause ?? (Array.isArray(e.errors) ? e.errors[0] : undefined);
  }
  return chain;
}

function messageOf(e: unknown): string {
  if (e instanceof Error || (typeof e === 'object' && e !== null && 'message' in e)) {
    const m = String((e as { message: unknown }).message ?? '');
    return m.replace(NAME_PREFIX, '').replace(/\s*\n\s*/g, ' ').trim();
  }
  return String(e).replace(NAME_PREFIX, '').trim();
}

function fieldsOf(chain: unknown[]): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  for (const e of chain) {
    if (typeof e !== 'object' || e === null) continue;
    for (const k of FIELDS) {
      const v = (e as Record<string, unknown>)[k];
      if (out[k] === undefined && (typeof v === 'string' || typeof v === 'number') && v !== '') out[k] = v;
    }
  }
  return out;
}

function hintOf(chain: unknown[], fields: Record<string, string | number>): string | undefined {
  for (const e of chain) {
    const h = (e as { hint?: unknown } | null)?.hint;
    if (typeof h === 'string' && h) return h;
  }
  return typeof fields.code === 'string' ? HINTS[fields.code] : undefined;
}

function stackOf(chain: unknown[]): string | undefined {
  const stacks = chain.map((e) => (e instanceof Error ? e.stack : undefined)).filter((s): s is string => !!s);
  return stacks.length ? stacks.join('\ncaused by: ') : undefined;
}

export function describeError(err: unknown): ErrorReport {
  const chain = chainOf(err);
  const parts: string[] = [];
  for (const e of chain) {
    const m = messageOf(e);
    // A wrapper often repeats its cause's text ("write failed: ENOSPC ..."): say it once.
    if (m && !parts.some((p) => p.includes(m))) parts.push(m);
  }
  const fields = fieldsOf(chain);
  const code = typeof fields.code === 'string' ? fields.code : undefined;
  const message = parts.join(': ') || code || 'unknown error';
  const hint = hintOf(chain, fields);
  const stack = stackOf(chain);
  return { message, fields, ...(hint ? { hint } : {}), ...(stack ? { stack } : {}) };
}
