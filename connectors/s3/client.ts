/**
 * S3 client construction and s3:// URLs. Settings come from the config's `s3:` section, then
 * the environment; credentials only from the SDK's default provider chain.
 */
import { S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { S3Config, type S3ConfigInput } from '../../schemas/s3.js';

export interface S3Location {
  bucket: string;
  /** key prefix without leading or trailing '/', '' for the whole bucket */
  prefix: string;
}


/** "s3://bucket/some/prefix/" -> { bucket, prefix: "some/prefix" }; throws a clear error otherwise. */
export function parseS3Url(url: string): S3Location {
  const m = /^s3:\/\/([^/]+)(?:\/(.*))?$/.exec(url);
  const bucket = m?.[1];
  // Bucket naming rules (3-63 chars, lower case, digits, dots, hyphens).
  if (!bucket || !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
    throw new Error(`invalid S3 URL ${JSON.stringify(url)}: expected s3://<bucket>[/<prefix>] with a valid bucket name`);
  }
  const prefix = (m?.[2] ?? '').replace(/^\/+|\/+$/g, '');
  if (prefix.split('/').some((s) => s === '.' || s === '..') || prefix.includes('//')) {
    throw new Error(`invalid S3 URL ${JSON.stringify(url)}: the prefix has empty, "." or ".." segments`);
  }
  return { bucket, prefix };
}

export function s3Url(loc: S3Location, key = ''): string {
  const path = [loc.prefix, key].filter((p) => p.length > 0).join('/');
  return `s3://${loc.bucket}${path ? `/${path}` : ''}`;
}

const CONNECT_TIMEOUT_MS = 10_000;
const SOCKET_IDLE_TIMEOUT_MS = 60_000;

/** The client for a config section (or none); endpoint and region fall back to the environment. */
export function createS3Client(section: S3ConfigInput | S3Config | undefined, env: NodeJS.ProcessEnv = process.env): S3Client {
  const cfg = S3Config.parse(section ?? {});
  const endpoint = cfg.endpoint ?? env.S3_ENDPOINT ?? undefined;
  return new S3Client({
    ...(endpoint ? { endpoint } : {}),
    region: cfg.region ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? 'us-east-1',
    // Custom servers rarely have per-bucket DNS names.
    forcePathStyle: cfg.force_path_style ?? endpoint !== undefined,
    maxAttempts: cfg.max_attempts,
    // Without these a server that accepts connections but never answers (stopped, overloaded,
    // a dead load balancer) hangs a request forever, and no retry ever starts. The socket
    // timeout is for silence, not for the whole transfer of a big part.
    requestHandler: { connectionTimeout: CONNECT_TIMEOUT_MS, socketTimeout: SOCKET_IDLE_TIMEOUT_MS },
  });
}

export function httpStatus(err: unknown): number | undefined {
  return err instanceof S3ServiceException ? err.$metadata?.httpStatusCode : (err as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
}

export function isNotFound(err: unknown): boolean {
  const name = (err as { name?: string })?.name;
  return name === 'NoSuchKey' || name === 'NotFound' || httpStatus(err) === 404;
}

/** Network failures that a server coming back cures (Node, undici and SDK timeouts). */
const TRANSIENT_NETWORK_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'EHOSTDOWN', 'ENETUNREACH', 'ENETDOWN', 'EAI_AGAIN', 'ENOTFOUND', 'EADDRNOTAVAIL',
  'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT',
]);
/** S3 error names that mean "not now" (AWS throttling and server-side trouble). */
const TRANSIENT_S3_NAMES = new Set(['SlowDown', 'Throttling', 'ThrottlingException', 'RequestTimeout', 'RequestTimeoutException', 'TimeoutError', 'InternalError', 'ServiceUnavailable', 'OperationAborted']);

/**
 * An outage rather than an answer: the server did not answer (refused, reset, timed out) or
 * answered 5xx / 429 / throttling. 4xx answers (access denied, no such bucket, 412) are not.
 * The SDK has already retried these `max_attempts` times within a few seconds; the stage's
 * outage retry (src/pipeline/storage/storage-retry.ts) waits out longer outages on top.
 */
export function isTransientS3Error(err: unknown): boolean {
  const e = err as { code?: unknown; name?: unknown; $retryable?: unknown; errors?: unknown[] } | null;
  if (!e) return false;
  const status = httpStatus(err);
  if (status !== undefined && (status >= 500 || status === 429)) return true;
  if (typeof e.name === 'string' && TRANSIENT_S3_NAMES.has(e.name)) return true;
  if (typeof e.code === 'string' && TRANSIENT_NETWORK_CODES.has(e.code)) return true;
  if (Array.isArray(e.errors) && e.errors.some(isTransientS3Error)) return true; // AggregateError of a multi-address connect
  return status === undefined && e.$retryable !== undefined;
}

/**
 * One line for humans: "NoSuchBucket (404): The specified bucket does not exist", or for a
 * network failure just "connect ECONNREFUSED 127.0.0.1:39000" (no "Error:" prefix; Node's
 * connect to localhost fails as an AggregateError with an empty message and inner errors).
 */
export function describeS3Error(err: unknown): string {
  const e = err as { name?: string; message?: string; code?: string; errors?: unknown[] };
  const status = httpStatus(err);
  let message = e?.message || (Array.isArray(e?.errors) && e.errors.length > 0 ? describeS3Error(e.errors[0]) : '') || e?.code || String(err);
  message = message.replace(/^(?:[A-Za-z]*Error: )+/, '');
  const generic = !e?.name || e.name === 'Error' || e.name === 'AggregateError';
  if (generic && !status) return message;
  return `${generic ? 'Error' : e.name}${status ? ` (${status})` : ''}: ${message}`;
}
