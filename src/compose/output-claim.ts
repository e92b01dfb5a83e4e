/**
 * What every writing command does to its output before anything else touches it: the folder
 * checked (not inside the input, writable), then the output's lease taken
 * (src/pipeline/commit/output-lease.ts) and renewed until the command releases it.
 */
import { realpathSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { acquireLease, type OutputLease } from '../pipeline/commit/output-lease.js';
import type { OutputTarget } from './io.js';
import { findInputConnector, isS3Url } from './io.js';
import { ReasoningJuryError } from '../util/errors.js';

export interface LeaseSettings {
  /** how long a lease lasts without renewal; renewed every quarter of it */
  expiryMs: number;
  /** --wait-for-lease: wait this long for a held lease (0: refuse at once) */
  waitMs: number;
  /** --take-over: the holder is gone */
  takeOver: boolean;
}

export const DEFAULT_LEASE_EXPIRY_MS = 2 * 60_000;

/** A problem the user fixes on the command line: the message is the one line to print. */
export class OutputFolderError extends ReasoningJuryError {
  /** Kept as fields of the fatal event (`--log-format json`), so a log query can match on them. */
  constructor(
    message: string,
    readonly logFields: Record<string, string> = {},
  ) {
    super(message);
  }

  override get kind() {
    return 'usage' as const;
  }
}

/** The path with symlinks resolved as far as it exists (a new --out's parent may be a link). */
function realPath(p: string): string {
  const abs = resolve(p);
  try {
    return realpathSync(abs);
  } catch {
    const parent = dirname(abs);
    return parent === abs ? abs : join(realPath(parent), basename(abs));
  }
}

/** `a` is `b` or inside it (local paths, or s3:// bucket + key prefix on '/' boundaries). */
function within(a: string, b: string): boolean {
  if (isS3Url(a) !== isS3Url(b)) return false;
  if (isS3Url(a)) {
    const norm = (u: string) => `${u.replace(/\/+$/, '')}/`;
    return norm(a).startsWith(norm(b));
  }
  const rel = relative(realPath(b), realPath(a));
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/**
 * --out inside --input would read its own parts back as input, --input inside --out would be
 * written over. A stream (Kafka, stdin) is no place to nest in; an unknown scheme is refused when opened.
 */
export function checkNesting(input: string, out: string): void {
  const place = findInputConnector(input)?.place;
  if (place === undefined || place === 'stream') return;
  if (within(out, input)) throw new OutputFolderError(`--out ${out} is inside --input ${input}: the run would read its own shards back as input; put the output elsewhere`);
  if (within(input, out)) throw new OutputFolderError(`--input ${input} is inside --out ${out}: the output's files would be mixed with the input; put the output elsewhere`);
}

const WHY: Record<string, string> = {
  EROFS: 'read-only file system (EROFS)',
  EACCES: 'permission denied (EACCES)',
  EPERM: 'operation not permitted (EPERM)',
  ENOTDIR: 'a part of the path is a file, not a folder (ENOTDIR)',
  EEXIST: 'a file of that name is in the way (EEXIST)',
  AccessDenied: 'access denied (AccessDenied)',
};

/** A local --out must be a folder this process can create files in; said before any model is called. */
export async function checkWritable(out: OutputTarget): Promise<void> {
  if (isS3Url(out.location)) return; // the bucket was checked on open; the lease is the first write
  try {
    await mkdir(out.location, { recursive: true });
  } catch (err) {
    throw notWritable(out.location, err);
  }
}

/** The one line for an output the command cannot write, or the error itself when it is something else. */
export function notWritable(location: string, err: unknown): Error {
  const code = (err as NodeJS.ErrnoException | null)?.code ?? '';
  const why = WHY[code];
  return why ? new OutputFolderError(`--out ${location} is not writable: ${why}; give a folder this user can write`, { path: location, code }) : (err as Error);
}

/** Folder checks, then the lease: the caller releases it at a clean end. */
export async function claimOutput(out: OutputTarget, o: { command: string; scope: string; settings: LeaseSettings; signal?: AbortSignal }): Promise<OutputLease> {
  await checkWritable(out);
  const lease = await acquireLease(out.store, out.location, {
    scope: o.scope,
    command: o.command,
    expiryMs: o.settings.expiryMs,
    waitMs: o.settings.waitMs,
    takeOver: o.settings.takeOver,
    ...(o.signal ? { signal: o.signal } : {}),
  }).catch((err: unknown) => {
    throw notWritable(out.location, err);
  });
  lease.startRenewing();
  return lease;
}
