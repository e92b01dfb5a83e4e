import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { packageRoot } from '../util/paths.js';

/**
 * The labelled benchmark files live outside the repository (they are never copied in):
 * $RJ_SHARED_DATA, else ../shared/data beside the checkout. null when absent, so callers can
 * skip with a clear message.
 */
export function sharedDataDir(): string | null {
  const dir = process.env.RJ_SHARED_DATA ? resolve(process.env.RJ_SHARED_DATA) : join(packageRoot(), '..', 'shared', 'data');
  return existsSync(dir) ? dir : null;
}

export const MISSING_DATA_MESSAGE = 'benchmark data not found: set RJ_SHARED_DATA or place the shared data folder at ../shared/data beside the checkout';
