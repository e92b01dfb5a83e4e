/**
 * A small reader of the Prometheus text exposition format (version 0.0.4), enough to check what
 * `/metrics` serves: `# HELP` / `# TYPE` lines and samples `name{label="value",...} number`.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  types: Map<string, string>;
  help: Map<string, string>;
  samples: Sample[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?/gy;

function labelsOf(text: string | undefined, line: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!text) return out;
  LABEL.lastIndex = 0;
  let m: RegExpExecArray | null;
  let end = 0;
  while ((m = LABEL.exec(text))) {
    out[m[1]!] = m[2]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
    end = LABEL.lastIndex;
  }
  if (end !== text.length) throw new Error(`bad labels in: ${line}`);
  return out;
}

// Special values are matched ignoring case, as Prometheus does (prom-client writes `Nan`).
function numberOf(s: string, line: string): number {
  const special = s.toLowerCase();
  if (special === '+inf' || special === 'inf') return Infinity;
  if (special === '-inf') return -Infinity;
  if (special === 'nan') return NaN;
  const n = Number(s);
  if (Number.isNaN(n)) throw new Error(`bad value in: ${line}`);
  return n;
}

export function parseExposition(text: string): Exposition {
  const e: Exposition = { types: new Map(), help: new Map(), samples: [] };
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (meta) {
      (meta[1] === 'TYPE' ? e.types : e.help).set(meta[2]!, meta[3]!);
      continue;
    }
    if (line.startsWith('#')) continue;
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    e.samples.push({ name: m[1]!, labels: labelsOf(m[2], line), value: numberOf(m[3]!, line) });
  }
  return e;
}

/** Sum of the samples named `name` whose labels include `match`. */
export function total(e: Exposition, name: string, match: Record<string, string> = {}): number {
  return e.samples.filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v)).reduce((a, s) => a + s.value, 0);
}

/** Whether any sample is named `name`. */
export const has = (e: Exposition, name: string): boolean => e.samples.some((s) => s.name === name);

/**
 * What breaks the Prometheus naming conventions among the families named `prefix…`: snake_case
 * names with the prefix, `_total` on counters and only there, base units (seconds, bytes) on
 * histograms and never ms / minutes / KB, a HELP text, snake_case labels not starting with `__`.
 */
export function conventionProblems(e: Exposition, prefix: string): string[] {
  const problems: string[] = [];
  const families = [...e.types].filter(([name]) => name.startsWith(prefix));
  if (families.length === 0) problems.push(`no family named ${prefix}…`);
  for (const [name, type] of families) {
    if (!new RegExp(`^${prefix}[a-z][a-z0-9]*(_[a-z0-9]+)*$`).test(name)) problems.push(`${name}: not snake_case`);
    if (type === 'counter' !== name.endsWith('_total')) problems.push(`${name}: a ${type} ${type === 'counter' ? 'must' : 'must not'} end in _total`);
    if (type === 'histogram' && !/_(seconds|bytes)$/.test(name)) problems.push(`${name}: a histogram needs a base unit suffix`);
    if (/_(ms|milliseconds|minutes|hours|kb|mb|kilobytes|megabytes)(_|$)/.test(name)) problems.push(`${name}: not a base unit`);
    if (!e.help.get(name)) problems.push(`${name}: no HELP`);
  }
  for (const s of e.samples.filter((x) => x.name.startsWith(prefix))) {
    const family = s.name.replace(/_(bucket|sum|count)$/, '');
    if (!e.types.has(s.name) && !(e.types.get(family) === 'histogram')) problems.push(`${s.name}: a sample without a TYPE`);
    for (const label of Object.keys(s.labels)) {
      if (!/^[a-z][a-z0-9_]*$/.test(label)) problems.push(`${s.name}: label ${label} is not snake_case`);
    }
  }
  return [...new Set(problems)];
}
