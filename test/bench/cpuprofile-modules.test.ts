import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { groupTable, selfByGroup, type CpuProfile } from '../../bench/cpuprofile-modules.js';

const dir = mkdtempSync(join(tmpdir(), 'rj-cpuprof-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// A bundled chunk as esbuild writes it: a `// path` comment above each module's code.
const chunk = join(dir, 'dist/cli/chunk-TEST.js');
mkdirSync(join(dir, 'dist/cli'), { recursive: true });
writeFileSync(
  chunk,
  ['import x from "y";', '', '// node_modules/zod/v4/core/schemas.js', 'function a() {}', '', '// dist/src/jury/judge.js', 'function b() {}', '// dist/connectors/file/jsonl-source.js', 'function c() {}'].join('\n'),
);
const url = pathToFileURL(chunk).href;

const frame = (id: number, functionName: string, u: string, lineNumber: number) => ({ id, callFrame: { functionName, url: u, lineNumber } });
const profile: CpuProfile = {
  nodes: [
    frame(1, '(idle)', '', -1),
    frame(2, '(garbage collector)', '', -1),
    frame(3, 'a', url, 3),
    frame(4, 'b', url, 6),
    frame(5, 'c', url, 8),
    frame(6, 'emit', 'node:events', 470),
    frame(7, '', 'wasm://wasm/012e380e', 0),
    frame(8, 'writev', '', -1),
    frame(9, 'x', 'file:///elsewhere/node_modules/@scope/pkg/index.js', 1),
  ],
  samples: [1, 2, 3, 3, 4, 5, 6, 7, 8, 9, 1],
  timeDeltas: [5000, 1000, 2000, 500, 3000, 700, 400, 300, 250, 100, 9000],
};

describe('cpuprofile modules', () => {
  const groups = selfByGroup(profile);

  it('maps bundled frames back to the module esbuild placed there, and leaves idle out', () => {
    expect(Object.fromEntries(groups)).toEqual({
      'garbage collector': 1,
      zod: 2.5,
      'src/jury': 3,
      'connectors/file': 0.7,
      'Node core': 0.4,
      WebAssembly: 0.3,
      '(native) writev': 0.25,
      '@scope/pkg': 0.1,
    });
  });

  it('orders the comparison by the difference and totals both sides', () => {
    const table = groupTable(groups, new Map([['zod', 0.4], ['src/jury', 3]])).split('\n');
    expect(table[2]).toBe('| zod | 3 | 0 | 2 |');
    expect(table.at(-1)).toBe('| **all** | 8 | 3 | 5 |');
  });
});
