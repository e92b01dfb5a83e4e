/**
 * Paths in a config file are relative to that file, not to the working directory, so
 * `run -c examples/jury.yaml` works from any folder. The files a config names as inputs are
 * checked here, when it loads: a wrong path is one line naming its key, before any work starts.
 */
import { statSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { JuryConfig } from '../../schemas/config.js';

/**
 * The path values as the file wrote them, kept on the loaded config under a symbol (spreads copy
 * it, JSON and config_hash's key walk do not see it): config_hash hashes these, so moving the
 * checkout or running from another folder does not change it.
 */
export const WRITTEN_PATHS: unique symbol = Symbol('config paths as written');
/** Per key: the value as written and what it resolved to (a later override of the key is hashed as it is). */
export interface WrittenPaths {
  'taxonomy.file'?: { written: string; resolved: string };
  prompts_dir?: { written: string; resolved: string };
  /** `path` of external juror seats, by seat id */
  external?: Record<string, { written: string; resolved: string }>;
}
export type LoadedConfig = JuryConfig & { [WRITTEN_PATHS]?: WrittenPaths };

const expandable = (p: string): boolean => p.startsWith('~');
const rel = (base: string, p: string): string => (isAbsolute(p) || expandable(p) ? p : resolve(base, p));
/** A model_path is a file path when it looks like one; a bare name is a catalog entry (`models list`). */
const looksLikePath = (p: string): boolean => p.includes('/') || p.includes('\\') || p.endsWith('.gguf');

function has(raw: unknown, ...keys: string[]): boolean {
  let v: unknown = raw;
  for (const k of keys) {
    if (!v || typeof v !== 'object' || !Object.hasOwn(v, k)) return false;
    v = (v as Record<string, unknown>)[k];
  }
  return v !== undefined && v !== null;
}

/**
 * Every path-like key, resolved against the config file's folder. Defaults are not the file's
 * (`cache.dir` absent stays `.cache/responses` under the working directory).
 */
export function resolveConfigPaths(c: JuryConfig, raw: unknown, configPath: string): LoadedConfig {
  const base = dirname(resolve(configPath));
  const endpoints = Object.fromEntries(
    Object.entries(c.endpoints).map(([name, e]) => [
      name,
      { ...e, ...(e.profile ? { profile: rel(base, e.profile) } : {}), ...(e.model_path && looksLikePath(e.model_path) ? { model_path: rel(base, e.model_path) } : {}) },
    ]),
  );
  const jurors = c.jurors.map((j) => (j.kind === 'external' && j.path !== undefined ? { ...j, path: rel(base, j.path) } : j));
  const external = Object.fromEntries(c.jurors.flatMap((j, i) => (j.kind === 'external' && j.path !== undefined ? [[j.id, { written: j.path, resolved: (jurors[i] as typeof j).path! }]] : [])));
  const out: LoadedConfig = {
    ...c,
    endpoints,
    jurors,
    cache: has(raw, 'cache', 'dir') ? { ...c.cache, dir: rel(base, c.cache.dir) } : c.cache,
    audit_log: c.audit_log.path !== null ? { path: rel(base, c.audit_log.path) } : c.audit_log,
    ...(c.prompts_dir !== undefined ? { prompts_dir: rel(base, c.prompts_dir) } : {}),
    ...(c.taxonomy?.file !== undefined ? { taxonomy: { ...c.taxonomy, file: rel(base, c.taxonomy.file) } } : {}),
  };
  out[WRITTEN_PATHS] = {
    ...(c.taxonomy?.file !== undefined ? { 'taxonomy.file': { written: c.taxonomy.file, resolved: out.taxonomy!.file! } } : {}),
    ...(c.prompts_dir !== undefined ? { prompts_dir: { written: c.prompts_dir, resolved: out.prompts_dir! } } : {}),
    ...(Object.keys(external).length > 0 ? { external } : {}),
  };
  return out;
}

function kindOf(path: string): 'file' | 'dir' | 'other' | 'missing' {
  try {
    const s = statSync(path);
    return s.isFile() ? 'file' : s.isDirectory() ? 'dir' : 'other';
  } catch {
    return 'missing';
  }
}

/** The first ancestor of `path` that exists must be a folder, or nothing can be created there. */
function creatable(path: string): string | null {
  let p = resolve(path);
  for (;;) {
    const k = kindOf(p);
    if (k === 'dir') return null;
    if (k !== 'missing') return p;
    const up = dirname(p);
    if (up === p) return null;
    p = up;
  }
}

/** Problems with the files a loaded config names, each as "key: what is wrong". */
export function pathProblems(c: JuryConfig): string[] {
  const problems: string[] = [];
  const need = (key: string, path: string | undefined, want: 'file' | 'dir') => {
    if (path === undefined || expandable(path)) return;
    const k = kindOf(path);
    if (k === 'missing') problems.push(`${key}: no such ${want === 'file' ? 'file' : 'folder'} ${path}`);
    else if (k !== want) problems.push(`${key}: ${path} is not a ${want === 'file' ? 'file' : 'folder'}`);
  };
  for (const [name, e] of Object.entries(c.endpoints)) need(`endpoints.${name}.profile`, e.profile, 'file');
  if (c.taxonomy?.enabled !== false) need('taxonomy.file', c.taxonomy?.file, 'file');
  need('prompts_dir', c.prompts_dir, 'dir');
  c.jurors.forEach((j, i) => {
    if (j.kind === 'external' && j.path !== undefined && kindOf(j.path) === 'missing') problems.push(`jurors.${i}.path: no such file or folder ${j.path}`);
  });
  const blockedCache = c.cache.enabled ? creatable(c.cache.dir) : null;
  if (blockedCache) problems.push(`cache.dir: cannot create ${resolve(c.cache.dir)}: ${blockedCache} is not a folder`);
  if (c.audit_log.path !== null) {
    if (kindOf(c.audit_log.path) === 'dir') problems.push(`audit_log.path: ${c.audit_log.path} is a folder, not a file`);
    const blocked = creatable(dirname(c.audit_log.path));
    if (blocked) problems.push(`audit_log.path: cannot create ${resolve(c.audit_log.path)}: ${blocked} is not a folder`);
  }
  return problems;
}
