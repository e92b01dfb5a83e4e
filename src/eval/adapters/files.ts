import { readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';

/** A file, or the files of a folder whose names end in one of `exts`, sorted by name. */
export function benchmarkFiles(path: string, exts: readonly string[]): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .filter((f) => exts.some((e) => f.endsWith(e)))
    .sort()
    .map((f) => join(path, f));
}

/** A file's stem: "math.json" -> "math". */
export function stem(path: string): string {
  return basename(path).replace(/\.(jsonl|json)$/, '');
}

/** Rows of a JSON array file or a JSONL file, with the 1-based line (or array position) of each. */
export function readJsonRows(path: string): Array<{ at: number; row: unknown; error?: string }> {
  const text = readFileSync(path, 'utf8');
  if (path.endsWith('.json')) {
    const v = JSON.parse(text) as unknown;
    if (!Array.isArray(v)) throw new Error(`${path}: expected a JSON array of records`);
    return v.map((row, i) => ({ at: i + 1, row }));
  }
  const out: Array<{ at: number; row: unknown; error?: string }> = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    try {
      out.push({ at: i + 1, row: JSON.parse(line) });
    } catch (e) {
      out.push({ at: i + 1, row: null, error: `invalid JSON: ${(e as Error).message}` });
    }
  });
  return out;
}
