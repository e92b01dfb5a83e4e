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
  });
}

export function httpStatus(err: unknown): number | undefined {
  return err instanceof S3ServiceException ? err.$metadata?.httpStatusCode : (err as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
}

export function isNotFound(err: unknown): boolean {
  const name = (err as { name?: string })?.name;
  return name === 'NoSuchKey' || name === 'NotFound' || httpStatus(err) === 404;
}

/** One line for humans: "NoSuchBucket (404): The specified bucket does not exist". */
export function describeS3Error(err: unknown): string {
  const e = err as { name?: string; message?: string };
  const status = httpStatus(err);
  // A service error's name says what it is (NoSuchBucket); a plain "Error" says nothing and
  // would read as "...: Error: connect ECONNREFUSED" in the one-line fatal message.
  const name = e?.name && e.name !== 'Error' ? e.name : status ? 'HTTP' : '';
  const text = e?.message ?? String(err);
  return name ? `${name}${status ? ` (${status})` : ''}: ${text}` : text;
}
