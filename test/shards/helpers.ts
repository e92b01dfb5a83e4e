/** Shared bits of the shard tests: expected reader types and the Python interpreter. */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { DataType, type Field } from 'apache-arrow';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** How pyarrow prints the type of a field we wrote (it keeps dictionaries via ARROW:schema). */
export function pyarrowType(f: Field): string {
  const t = f.type;
  if (DataType.isDictionary(t)) return 'dictionary<values=string, indices=int32, ordered=0>';
  if (DataType.isList(t)) {
    const child = t.children[0]!;
    return `list<item: ${pyarrowType(child)}${child.nullable ? '' : ' not null'}>`;
  }
  if (DataType.isStruct(t)) {
    return `struct<${t.children.map((c) => `${c.name}: ${pyarrowType(c)}${c.nullable ? '' : ' not null'}`).join(', ')}>`;
  }
  if (DataType.isInt(t)) return t.bitWidth === 32 ? 'int32' : 'int64';
  if (DataType.isFloat(t)) return 'double';
  if (DataType.isBool(t)) return 'bool';
  if (DataType.isUtf8(t)) return 'string';
  throw new Error(`no expectation for ${String(t)}`);
}

/** Struct field names DuckDB's DESCRIBE quotes (SQL keywords); `p.error` still works in queries. */
const DUCKDB_QUOTED = new Set(['error', 'content']);

/** DuckDB's SQL type for the same field (dictionaries are plain VARCHAR there). */
export function duckdbType(f: Field): string {
  const t = f.type;
  if (DataType.isList(t)) return `${duckdbType(t.children[0]!)}[]`;
  if (DataType.isStruct(t)) return `STRUCT(${t.children.map((c) => `${DUCKDB_QUOTED.has(c.name) ? `"${c.name}"` : c.name} ${duckdbType(c)}`).join(', ')})`;
  if (DataType.isDictionary(t) || DataType.isUtf8(t)) return 'VARCHAR';
  if (DataType.isInt(t)) return t.bitWidth === 32 ? 'INTEGER' : 'BIGINT';
  if (DataType.isFloat(t)) return 'DOUBLE';
  if (DataType.isBool(t)) return 'BOOLEAN';
  throw new Error(`no expectation for ${String(t)}`);
}

export type PythonProbe = { python: string; error?: undefined } | { python?: undefined; error: string };

/** Runs scripts/pyenv.sh once (it is idempotent and cached on the machine). */
export function findPython(): PythonProbe {
  try {
    const out = execFileSync('bash', ['scripts/pyenv.sh'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 15 * 60_000,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const python = out.trim().split('\n').pop();
    return python ? { python } : { error: 'scripts/pyenv.sh printed no python path' };
  } catch (e) {
    const err = e as { message: string; stderr?: string };
    return { error: `scripts/pyenv.sh failed: ${err.stderr?.trim() || err.message}` };
  }
}

export const IN_CI = process.env.CI === 'true' || process.env.CI === '1';
