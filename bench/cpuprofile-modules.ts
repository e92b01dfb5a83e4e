/**
 * Where a thread's CPU went, by package or source folder, from a V8 `.cpuprofile` (written by
 * `node --cpu-prof`, e.g. through WHOLE_RUN_NODE_ARGS of the whole-run benchmark). Frames in the
 * bundled CLI (dist/cli/*.js) are mapped back to the module esbuild put there, using the
 * `// path` comment it writes above each module, so `zod` or `src/jury` shows up as itself
 * rather than as a chunk name.
 *
 * Usage: node dist/bench/cpuprofile-modules.js A.cpuprofile [B.cpuprofile]
 * Prints self milliseconds per group (idle left out) for A, and with B the difference A − B.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { fmt } from './common.js';

export interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>;
  samples: number[];
  timeDeltas: number[];
}

/** 0-based line numbers of esbuild's module markers in one bundled file, with the module path. */
type Markers = Array<[line: number, path: string]>;

function readMarkers(file: string): Markers {
  const out: Markers = [];
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((l, i) => {
      if (/^\/\/ (node_modules|dist|src|schemas|connectors)\//.test(l)) out.push([i, l.slice(3).trim()]);
    });
  return out;
}

/** The group a module path belongs to: its npm package, or its top source folder. */
function groupOfPath(path: string): string {
  const nm = path.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = path.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const parts = path.replace(/^.*?dist\//, '').split('/');
  if ((parts[0] === 'src' || parts[0] === 'connectors') && parts.length > 2) return `${parts[0]}/${parts[1]}`;
  return parts.length > 1 ? parts[0]! : path;
}

/** Maps one call frame to its group; bundled files are read once each. */
export function frameGrouper(): (cf: CpuProfile['nodes'][number]['callFrame']) => string {
  const markers = new Map<string, Markers | null>();
  return ({ url, functionName, lineNumber }) => {
    if (url === '') return functionName === '(garbage collector)' ? 'garbage collector' : `(native) ${functionName || 'anonymous'}`;
    if (url.startsWith('wasm://')) return 'WebAssembly';
    if (url.startsWith('node:') || !url.includes('/')) return 'Node core';
    const file = url.startsWith('file:') ? fileURLToPath(url) : url;
    if (!markers.has(file)) {
      let m: Markers | null = null;
      try {
        m = file.includes('/dist/cli/') ? readMarkers(file) : null;
      } catch {
        m = null; // the profile was taken on another build; fall back to the file's own path
      }
      markers.set(file, m);
    }
    const m = markers.get(file);
    let path = file;
    // Markers are in file order: the last one at or above the frame's line names its module.
    for (const [line, p] of m ?? []) {
      if (line > lineNumber) break;
      path = p;
    }
    return groupOfPath(path);
  };
}

/** Self milliseconds per group, idle time left out. */
export function selfByGroup(profile: CpuProfile, group = frameGrouper()): Map<string, number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const out = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const cf = byId.get(id);
    if (!cf || cf.functionName === '(idle)') return;
    const g = group(cf);
    out.set(g, (out.get(g) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  });
  return out;
}

/** A Markdown table of A's groups (and B's, and A − B, when given), largest difference first. */
export function groupTable(a: Map<string, number>, b?: Map<string, number>, rows = 30): string {
  const keys = [...new Set([...a.keys(), ...(b?.keys() ?? [])])];
  const diff = (k: string) => (a.get(k) ?? 0) - (b?.get(k) ?? 0);
  keys.sort((x, y) => diff(y) - diff(x));
  const sum = (m: Map<string, number>) => [...m.values()].reduce((s, v) => s + v, 0);
  const head = b ? ['| group | A self ms | B self ms | A − B |', '|---|---|---|---|'] : ['| group | self ms |', '|---|---|'];
  const line = (k: string) => (b ? `| ${k} | ${fmt(a.get(k) ?? 0, 0)} | ${fmt(b.get(k) ?? 0, 0)} | ${fmt(diff(k), 0)} |` : `| ${k} | ${fmt(a.get(k) ?? 0, 0)} |`);
  const total = b ? `| **all** | ${fmt(sum(a), 0)} | ${fmt(sum(b), 0)} | ${fmt(sum(a) - sum(b), 0)} |` : `| **all** | ${fmt(sum(a), 0)} |`;
  return [...head, ...keys.slice(0, rows).map(line), total].join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [a, b] = process.argv.slice(2);
  if (!a) {
    process.stderr.write('usage: node dist/bench/cpuprofile-modules.js A.cpuprofile [B.cpuprofile]\n');
    process.exit(2);
  }
  const load = (f: string) => selfByGroup(JSON.parse(readFileSync(f, 'utf8')) as CpuProfile);
  process.stdout.write(`${groupTable(load(a), b ? load(b) : undefined)}\n`);
}
