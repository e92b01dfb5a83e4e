/**
 * Where fetched models live: $RJ_MODEL_CACHE, else $XDG_CACHE_HOME/reasoning-jury/models, else
 * ~/.cache/reasoning-jury/models. Outside the work tree on purpose: a model is never committed,
 * and CI runs on the same machine find it again instead of downloading it each time.
 */
import { existsSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { ConfigError } from '../config/load.js';
import { catalogModel, CATALOG } from './catalog.js';

export function modelCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.RJ_MODEL_CACHE) return resolve(expandHome(env.RJ_MODEL_CACHE));
  const base = env.XDG_CACHE_HOME && isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : join(homedir(), '.cache');
  return join(base, 'reasoning-jury', 'models');
}

/** Where a catalog model is (or would be) cached. */
export function catalogModelPath(name: string, cacheDir: string = modelCacheDir()): string {
  const m = catalogModel(name);
  if (!m) throw new ModelNotFoundError(`unknown model "${name}" (known: ${Object.keys(CATALOG).join(', ')})`);
  return join(cacheDir, m.name, m.file);
}

/** A ConfigError, so the CLI reports it as a usage problem (exit 2) with no stack trace. */
export class ModelNotFoundError extends ConfigError {
  override name = 'ModelNotFoundError';
}

/**
 * `model_path` from a config or the command line -> a file to load. A catalog name resolves to
 * its cached copy (fetched or not: say how to fetch it); anything else is a path (~ expanded).
 */
export function resolveModelPath(spec: string, opts: { cacheDir?: string; cwd?: string } = {}): string {
  const m = catalogModel(spec);
  if (m) {
    const path = catalogModelPath(spec, opts.cacheDir ?? modelCacheDir());
    // Size only: hashing ~100 MB on every start would cost more than loading the model.
    if (!existsSync(path) || statSync(path).size !== m.bytes) {
      throw new ModelNotFoundError(`model "${spec}" is not in the cache (${path}); run: reasoning-jury models fetch ${spec}`);
    }
    return path;
  }
  const path = resolve(opts.cwd ?? process.cwd(), expandHome(spec));
  if (!existsSync(path)) throw new ModelNotFoundError(`model file not found: ${path}`);
  return path;
}

function expandHome(p: string): string {
  return p === '~' ? homedir() : p.startsWith('~/') ? join(homedir(), p.slice(2)) : p;
}
