import { ReasoningJuryError } from '../../util/errors.js';
/**
 * A storage operation that failed for good, as one typed error: what was being done (op), to
 * which object (key, and where that is: a path or an s3:// URL), in which output store, for
 * which range, why (the cause's code and text), and how long the stage waited for the store
 * to come back. Its message is one line for people, without "Error:" prefixes or a stack; the
 * fields are there for log formatters and metrics.
 */

export type StorageOp = 'write' | 'read' | 'check' | 'list';

/**
 * not-retryable: the cause is not an outage (access denied, read-only file system, a bad key);
 * gave-up: an outage lasted longer than the configured maximum;
 * stopped: the run was asked to stop while it waited for the store.
 */
export type StorageGiveUp = 'not-retryable' | 'gave-up' | 'stopped';

export interface StorageFailure {
  op: StorageOp;
  /** key relative to the output root ('' for a listing of the root) */
  key: string;
  /** where the key is: an absolute path or an s3:// URL */
  location: string;
  /** the output store (folder or s3:// URL) */
  store: string;
  /** the range being committed, `<first>..<last>`, when the failure happened in a commit */
  range?: string;
  /** errno or S3 error code of the cause: ENOSPC, ECONNREFUSED, SlowDown, 503 ... */
  code: string;
  /** the cause's own message */
  detail: string;
  why: StorageGiveUp;
  /** how long the store had been failing when the stage gave up (0 when it did not wait) */
  waitedMs: number;
}

export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`;
}

/** The one line: what failed, why, what is (not) visible, and what to do. */
export function storageFailureLine(f: StorageFailure): string {
  const what = `could not ${f.op} ${f.location}${f.range ? ` (range ${f.range})` : ''}: ${f.detail}`;
  const head =
    f.why === 'gave-up'
      ? `storage unavailable${f.waitedMs >= 1000 ? ` for ${formatDuration(f.waitedMs)}` : ''}, giving up: ${what}`
      : f.why === 'stopped'
        ? `stopped while waiting ${formatDuration(f.waitedMs)} for storage: ${what}`
        : what;
  const visible = f.range ? '; the range is not committed, so readers that go through manifests do not see it' : '';
  const space = f.code === 'ENOSPC' || f.code === 'EDQUOT';
  const todo =
    f.why === 'not-retryable'
      ? `Fix ${space ? 'the free space of' : 'access to'} ${f.store}, then run the same command again`
      : `Run the same command again once ${f.store} ${space ? 'has free space' : 'is reachable'}`;
  return `${head}${visible}. ${todo}: committed ranges are kept and not judged again`;
}

export class StorageError extends ReasoningJuryError {
  override get kind() {
    return 'storage' as const;
  }
  override name = 'StorageError';

  constructor(
    readonly failure: StorageFailure,
    options?: { cause?: unknown },
  ) {
    super(storageFailureLine(failure), options);
  }

  get op(): StorageOp {
    return this.failure.op;
  }
  get key(): string {
    return this.failure.key;
  }
  get range(): string | undefined {
    return this.failure.range;
  }
  get code(): string {
    return this.failure.code;
  }

  /** The same failure, placed in the range whose commit it stopped. */
  inRange(range: string): StorageError {
    return this.failure.range ? this : new StorageError({ ...this.failure, range }, { cause: this.cause });
  }
}

/** errno / SDK code of an error, else its name, else its HTTP status. */
export function causeCode(err: unknown): string {
  const e = err as { code?: unknown; name?: unknown; $metadata?: { httpStatusCode?: number } } | null;
  if (typeof e?.code === 'string' && e.code) return e.code;
  if (typeof e?.name === 'string' && e.name && e.name !== 'Error' && e.name !== 'AggregateError') return e.name;
  const status = e?.$metadata?.httpStatusCode;
  return status ? String(status) : 'unknown';
}

/**
 * The cause as one line without "Error:" prefixes: "ENOSPC: no space left on device, write",
 * "connect ECONNREFUSED 127.0.0.1:39000", "SlowDown (503): Please reduce your request rate".
 * Node's connect errors to localhost are AggregateErrors with an empty message (one attempt
 * per address family): their first inner error speaks for them.
 */
export function causeText(err: unknown): string {
  const e = err as { message?: unknown; errors?: unknown[]; $metadata?: { httpStatusCode?: number } } | null;
  let message = typeof e?.message === 'string' ? e.message : String(err);
  if (!message && Array.isArray(e?.errors) && e.errors.length > 0) message = causeText(e.errors[0]);
  message = message.replace(/^(?:[A-Za-z]*Error: )+/, '').replace(/\s*\n[\s\S]*$/, '');
  const code = causeCode(err);
  const status = e?.$metadata?.httpStatusCode;
  const label = status && code !== String(status) ? `${code} (${status})` : code;
  if (code === 'unknown' || message.includes(code)) return message || code;
  return message ? `${label}: ${message}` : label;
}
