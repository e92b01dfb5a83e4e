import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { createRequire } from 'node:module';
import type { z } from 'zod';
import { FilterPolicy, JuryConfig, type JuryConfigInput } from '../../schemas/config.js';
import { pathProblems, resolveConfigPaths, WRITTEN_PATHS, type LoadedConfig } from './paths.js';
import { ReasoningJuryError } from '../util/errors.js';

export class ConfigError extends ReasoningJuryError {
  override get kind() {
    return 'config' as const;
  }
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/**
 * "invalid config in jury.yaml: jurors.1.endpoint: unknown endpoint ...; mode: ..." — one line
 * (a fatal error is one line on stderr), each problem with its key path.
 */
export function formatIssues(issues: readonly z.core.$ZodIssue[], source: string): string {
  const parts = issues.map((i) => {
    const path = i.path.length > 0 ? i.path.map(String).join('.') : '(top level)';
    return `${path}: ${oneLine(i.message)}`;
  });
  return `invalid config in ${source}: ${parts.join('; ')}`;
}

const oneLine = (s: string): string => s.replace(/\s*\n\s*/g, ' ').trim();

export function parseConfig(raw: unknown, source = 'config'): JuryConfig {
  const res = JuryConfig.safeParse(raw);
  if (!res.success) throw new ConfigError(formatIssues(res.error.issues, source));
  return res.data;
}

// The YAML parser is loaded only for YAML files: a JSON config (the usual one in automation)
// then starts without it.
const parseYaml = (text: string): unknown => (createRequire(import.meta.url)('yaml') as typeof import('yaml')).parse(text);

/**
 * A filter policy for `decide`: a file holding `rules`/`default` alone, or a whole jury config
 * whose `filter` section is taken (the rest is not read: `decide` calls no model).
 */
export function loadPolicyFile(path: string): FilterPolicy {
  const raw = readStructured(path);
  const section = raw && typeof raw === 'object' && 'filter' in raw ? (raw as { filter: unknown }).filter : raw;
  const prefix = section === raw ? [] : ['filter'];
  const res = FilterPolicy.safeParse(section);
  if (!res.success) throw new ConfigError(formatIssues(res.error.issues.map((i) => ({ ...i, path: [...prefix, ...i.path] })), path));
  return res.data;
}

function readStructured(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read config ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  try {
    return extname(path) === '.json' ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    // The YAML parser adds a code frame on further lines: the first line says what and where.
    throw new ConfigError(`cannot parse ${path}: ${(err as Error).message.split('\n')[0]!.replace(/:$/, '')}`);
  }
}

/** A config file, its paths resolved against its folder and the files it names checked. */
export function loadConfigFile(path: string): JuryConfig {
  const raw = readStructured(path);
  const config = resolveConfigPaths(parseConfig(raw, path), raw, path);
  const problems = pathProblems(config);
  if (problems.length > 0) throw new ConfigError(`invalid config in ${path}: ${problems.join('; ')}`);
  return config;
}

/**
 * The embedded default: three simulated jurors and a simulated consolidator, served in-process.
 * Used by the demo and by `judge`/`run` when no --config is given.
 */
export function defaultConfigInput(): JuryConfigInput {
  return {
    endpoints: { sim: { kind: 'simulator' } },
    jurors: [
      { id: 'jury-0', endpoint: 'sim', model: 'sim-juror-a' },
      { id: 'jury-1', endpoint: 'sim', model: 'sim-juror-b' },
      { id: 'jury-2', endpoint: 'sim', model: 'sim-juror-c' },
    ],
    consolidator: { id: 'consolidator', endpoint: 'sim', model: 'sim-consolidator' },
    mode: 'consolidation',
    cache: { enabled: false, dir: '.cache/responses' },
    // Illustrative: simulated seats priced like gpt-oss-120b (the paper's list price, §4.8) so
    // the cost columns and the ledger show realistic magnitudes in the demo.
    prices: Object.fromEntries(['sim-juror-a', 'sim-juror-b', 'sim-juror-c', 'sim-consolidator'].map((m) => [m, { input_per_mtok: 0.15, output_per_mtok: 0.62 }])),
  };
}

export function defaultConfig(): JuryConfig {
  return parseConfig(defaultConfigInput(), 'embedded default');
}

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical((v as Record<string, unknown>)[k])]));
  }
  return v;
}

/** Top-level sections left out of config_hash: where and how to run, not what a verdict says. */
export const OPERATIONAL_KEYS = ['endpoints', 'prices', 'cache', 'audit_log', 'max_outage_ms', 'kafka', 's3', 'verdict_details', 'output', 'budget_usd', 'budget_tokens', 'preflight', 'batch'] as const satisfies ReadonlyArray<keyof JuryConfig>;

/**
 * Hash of what shapes a verdict: seats, models, sampling, mode and thresholds. Operational
 * settings (cache and audit paths, limits, retries, base URLs) are left out so moving an
 * endpoint or a folder does not change it.
 */
export function configHash(c: JuryConfig): string {
  const operational = new Set<string>(OPERATIONAL_KEYS);
  const shaping: Record<string, unknown> = Object.fromEntries(Object.entries(c).filter(([k]) => !operational.has(k)));
  // `phase1: { strategy: all }` is what its absence means: the same verdicts, the same hash.
  if (c.phase1?.strategy === 'all') delete shaping.phase1;
  // Paths as the file wrote them (see src/config/paths.ts): where the checkout lives is not what a verdict says.
  const written = (c as LoadedConfig)[WRITTEN_PATHS];
  if (written?.prompts_dir && c.prompts_dir === written.prompts_dir.resolved) shaping.prompts_dir = written.prompts_dir.written;
  const tax = written?.['taxonomy.file'];
  if (tax && c.taxonomy?.file === tax.resolved) shaping.taxonomy = { ...c.taxonomy, file: tax.written };
  const ext = written?.external;
  if (ext) shaping.jurors = c.jurors.map((j) => (j.kind === 'external' && j.path !== undefined && ext[j.id]?.resolved === j.path ? { ...j, path: ext[j.id]!.written } : j));
  return createHash('sha256').update(JSON.stringify(canonical(shaping))).digest('hex').slice(0, 16);
}
