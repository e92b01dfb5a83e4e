/**
 * Secret redaction shared by the whole project (audit log, errors, logs, shards).
 *
 * A secret is the value of an environment variable whose NAME looks secret-ish and whose value
 * is long enough to be worth hiding (short values like "1" or "true" would shred ordinary text).
 * Callers can add explicit secrets, e.g. the value of an endpoint's `api_key_env` whatever its name.
 */

export const SECRET_NAME_PATTERN = /(KEY|SECRET|TOKEN|PASSWORD|CREDENTIAL)/i;
export const MIN_SECRET_LENGTH = 6;
export const REDACTED = '[REDACTED]';

// Bearer tokens can reach us from places the env does not describe (headers echoed by a server).
const BEARER = /(\bBearer\s+)[A-Za-z0-9._~+/=-]{6,}/g;

type Env = Record<string, string | undefined>;

/** The secret values found in `env`, longest first so a secret containing another is replaced whole. */
export function secretValues(env: Env = process.env, extra: Iterable<string | undefined> = []): string[] {
  const found = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (value && value.length >= MIN_SECRET_LENGTH && SECRET_NAME_PATTERN.test(name)) found.add(value);
  }
  for (const value of extra) if (value && value.length >= MIN_SECRET_LENGTH) found.add(value);
  return [...found].sort((a, b) => b.length - a.length);
}

export interface Redactor {
  text(s: string): string;
  deep<T>(value: T): T;
}

/** Builds a redactor once (the env scan is not free) for hot paths such as the audit log. */
export function createRedactor(env: Env = process.env, extra: Iterable<string | undefined> = []): Redactor {
  const secrets = secretValues(env, extra);
  const text = (s: string): string => {
    let out = s;
    for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    return out.replace(BEARER, `$1${REDACTED}`);
  };
  const deep = <T>(value: T): T => walk(value, text, new WeakMap()) as T;
  return { text, deep };
}

/** Replace every secret value from `env` in `text` with [REDACTED]. */
export function redactSecrets(text: string, env: Env = process.env): string {
  return createRedactor(env).text(text);
}

/** Deep copy of `value` with every string (keys included) redacted; Errors become plain objects. */
export function redactDeep<T>(value: T, env: Env = process.env): T {
  return createRedactor(env).deep(value);
}

function walk(value: unknown, text: (s: string) => string, seen: WeakMap<object, unknown>): unknown {
  if (typeof value === 'string') return text(value);
  if (value === null || typeof value !== 'object') return value;
  if (seen.has(value)) return seen.get(value);
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    seen.set(value, out);
    for (const item of value) out.push(walk(item, text, seen));
    return out;
  }
  if (value instanceof Date) return new Date(value.getTime());
  const out: Record<string, unknown> = {};
  seen.set(value, out);
  if (value instanceof Error) {
    // name/message/stack are not enumerable; keep them, they are exactly where keys leak.
    out.name = value.name;
    out.message = text(value.message);
    if (value.stack) out.stack = text(value.stack);
  }
  for (const [k, v] of Object.entries(value)) out[text(k)] = walk(v, text, seen);
  return out;
}
