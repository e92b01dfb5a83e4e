// The folder rules (.dependency-cruiser.cjs, docs/architecture.md) must (a) catch deliberate
// violations and (b) hold on the real tree. Both run the exact `npm run lint:deps` command,
// only asking for JSON so the test can name the broken pairs.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const depcruiseBin = join(root, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');

interface Violation {
  rule: string;
  from: string;
  to: string;
}

/** The lint:deps script's arguments, so the test checks what CI runs and not a copy of it. */
function lintDepsArgs(): string[] {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const [bin, ...args] = (pkg.scripts['lint:deps'] ?? '').split(/\s+/);
  expect(bin).toBe('depcruise');
  return args;
}

/** Runs the lint:deps command in `cwd` (plus `extra` arguments); stdout and exit code. */
function depcruise(cwd: string, extra: string[] = []): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, [depcruiseBin, ...lintDepsArgs(), ...extra], {
    cwd,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** Every violation the rules find with `cwd` as the project root, and how many are errors. */
function cruise(cwd: string): { errors: number; violations: Violation[] } {
  const run = depcruise(cwd, ['--output-type', 'json']);
  if (!run.stdout) throw new Error(`dependency-cruiser printed nothing (status ${run.status}): ${run.stderr}`);
  const result = JSON.parse(run.stdout) as {
    summary: { error: number; violations: Array<{ rule: { name: string }; from: string; to: string }> };
  };
  const violations = result.summary.violations.map((v) => ({ rule: v.rule.name, from: v.from, to: v.to }));
  return { errors: result.summary.error, violations };
}

const show = (vs: Violation[]) => vs.map((v) => `${v.rule}: ${v.from} -> ${v.to}`).join('\n');

/** A tiny tree shaped like ours: allowed imports, and one deliberate break per rule. */
const FIXTURE: Record<string, string> = {
  'package.json': '{ "type": "module" }\n',
  'tsconfig.json': JSON.stringify({
    compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', strict: true },
    include: ['src', 'connectors', 'schemas', 'test'],
  }),
  'schemas/trace.ts': 'export type Trace = { id: string };\n',
  'schemas/bad.ts': "import { seed } from '../src/util/prng.js';\nexport const bad = seed;\n",
  'src/util/prng.ts': 'export const seed = 1;\n',
  'src/util/bad.ts': "import { judge } from '../jury/judge.js';\nexport const bad = judge;\n",
  'src/pipeline/source.ts':
    "import type { Trace } from '../../schemas/trace.js';\nexport interface Source { next(): Trace | undefined }\n",
  'src/pipeline/stage.ts':
    "import type { Source } from './source.js';\nexport function runStage(s: Source) { return s.next(); }\n",
  'connectors/file/source.ts': [
    "import type { Source } from '../../src/pipeline/source.js';",
    "import { seed } from '../../src/util/prng.js';",
    'export const fileSource: Source = { next: () => ({ id: String(seed) }) };',
    '',
  ].join('\n'),
  'connectors/kafka/job.ts': [
    "import { runStage } from '../../src/pipeline/stage.js';",
    "import { fileSource } from '../file/source.js';",
    'export const run = () => runStage(fileSource);',
    '',
  ].join('\n'),
  // connector entries (connectors/<name>.ts): register through the pipeline's contract, load only their own folder
  'src/pipeline/connector.ts': "import type { Source } from './source.js';\nexport const registerInput = (s: Source) => s;\n",
  'connectors/file.ts': "import { registerInput } from '../src/pipeline/connector.js';\nimport { fileSource } from './file/source.js';\nregisterInput(fileSource);\n",
  'connectors/kafka.ts': "import { fileSource } from './file/source.js';\nexport const entry = fileSource;\n",
  'src/sim/index.ts': "import type { ChatRequest } from '../llm/types.js';\nexport const sim = (r: ChatRequest) => r;\n",
  'src/sim/tasks.ts': "import { wire } from '../taxonomy/wire.js';\nexport const tasks = wire;\n",
  'src/llm/types.ts': 'export type ChatRequest = { prompt: string };\n',
  'src/llm/gateway.ts': "import { fake } from '../../test/helpers/fake.js';\nexport const gateway = fake;\n",
  'src/taxonomy/wire.ts': 'export const wire = 1;\n',
  'src/jury/judge.ts': [
    "import { sim } from '../sim/index.js';",
    "import { runStage } from '../pipeline/stage.js';",
    'export const judge = [sim, runStage];',
    '',
  ].join('\n'),
  'src/derive/a.ts': "import { b } from './b.js';\nexport const a = () => b();\n",
  'src/derive/b.ts': "import { a } from './a.js';\nexport const b = (): unknown => a;\n",
  'src/segment/index.ts': "import { prompt } from '../prompts/frame.js';\nexport const segment = prompt;\n",
  'src/segment/words.ts': 'export const words = 1;\n',
  'src/prompts/frame.ts': "import { words } from '../segment/words.js';\nexport const prompt = words;\n",
  'src/config/load.ts': "import { gone } from './missing.js';\nexport const load = gone;\n",
  'src/report/job.ts': "import { runStage } from '../pipeline/stage.js';\nexport const report = runStage;\n",
  'src/cli/sim-ladder.ts': "import { sim } from '../sim/index.js';\nexport const ladder = sim;\n",
  'src/cli/main.ts': [
    "import { sim } from '../sim/index.js';",
    "import { run } from '../../connectors/kafka/job.js';",
    "import { runStage } from '../pipeline/stage.js';",
    'export const main = [sim, run, runStage];',
    '',
  ].join('\n'),
  'src/ops/metrics.ts': "import { runStage } from '../pipeline/stage.js';\nexport const metrics = runStage;\n",
  'src/ops/bad.ts': "import { run } from '../../connectors/kafka/job.js';\nexport const bad = run;\n",
  'src/cli/ops.ts': "import { metrics } from '../ops/metrics.js';\nexport const ops = metrics;\n",
  'src/taxonomy/watched.ts': "import { metrics } from '../ops/metrics.js';\nexport const watched = metrics;\n",
  'test/helpers/fake.ts': 'export const fake = 1;\n',
  // the pipeline's own layers: the executor may import commit/ and storage/, commit/ only storage/, storage/ neither
  'src/pipeline/storage/object-store.ts': 'export const store = 1;\n',
  'src/pipeline/storage/bad.ts': "import { layout } from '../commit/layout.js';\nexport const bad = layout;\n",
  'src/pipeline/commit/layout.ts': 'export const layout = 1;\n',
  'src/pipeline/commit/shard-commit.ts': [
    "import { store } from '../storage/object-store.js';",
    "import { runStage } from '../stage.js';",
    'export const commit = [store, runStage];',
    '',
  ].join('\n'),
  'src/pipeline/range-commit.ts': [
    "import { layout } from './commit/layout.js';",
    "import { store } from './storage/object-store.js';",
    'export const rangeCommit = [layout, store];',
    '',
  ].join('\n'),
};

describe('folder rules', () => {
  let fixture: string;
  let found: { errors: number; violations: Violation[] };

  beforeAll(() => {
    fixture = mkdtempSync(join(tmpdir(), 'rj-arch-'));
    for (const [path, text] of Object.entries(FIXTURE)) {
      mkdirSync(dirname(join(fixture, path)), { recursive: true });
      writeFileSync(join(fixture, path), text);
    }
    copyFileSync(join(root, '.dependency-cruiser.cjs'), join(fixture, '.dependency-cruiser.cjs'));
    found = cruise(fixture);
  });
  afterAll(() => rmSync(fixture, { recursive: true, force: true }));

  it('reports every deliberate violation in a fixture tree', () => {
    const { errors, violations } = found;
    const expected: Violation[] = [
      { rule: 'connectors-only-pipeline-interfaces', from: 'connectors/kafka/job.ts', to: 'src/pipeline/stage.ts' },
      { rule: 'connectors-are-independent', from: 'connectors/kafka/job.ts', to: 'connectors/file/source.ts' },
      { rule: 'schemas-import-nothing-internal', from: 'schemas/bad.ts', to: 'src/util/prng.ts' },
      { rule: 'util-is-neutral', from: 'src/util/bad.ts', to: 'src/jury/judge.ts' },
      { rule: 'no-production-import-of-sim', from: 'src/jury/judge.ts', to: 'src/sim/index.ts' },
      { rule: 'judging-imports-down-only', from: 'src/jury/judge.ts', to: 'src/pipeline/stage.ts' },
      { rule: 'sim-imports-little', from: 'src/sim/tasks.ts', to: 'src/taxonomy/wire.ts' },
      { rule: 'no-test-code-in-production', from: 'src/llm/gateway.ts', to: 'test/helpers/fake.ts' },
      { rule: 'offline-jobs-read-shards', from: 'src/report/job.ts', to: 'src/pipeline/stage.ts' },
      { rule: 'no-circular', from: 'src/derive/a.ts', to: 'src/derive/b.ts' },
      { rule: 'not-to-unresolvable', from: 'src/config/load.ts', to: './missing.js' },
      { rule: 'ops-only-observes', from: 'src/ops/bad.ts', to: 'connectors/kafka/job.ts' },
      { rule: 'only-the-cli-uses-ops', from: 'src/taxonomy/watched.ts', to: 'src/ops/metrics.ts' },
      { rule: 'storage-imports-no-pipeline', from: 'src/pipeline/storage/bad.ts', to: 'src/pipeline/commit/layout.ts' },
      { rule: 'commit-imports-storage-only', from: 'src/pipeline/commit/shard-commit.ts', to: 'src/pipeline/stage.ts' },
    ];
    for (const v of expected) expect(violations, show(violations)).toContainEqual(v);
    // src/segment and src/prompts import each other through different modules: no module cycle, a folder cycle.
    const folderCycles = violations.filter((v) => v.rule === 'no-folder-cycle').map((v) => v.from);
    expect(folderCycles, show(violations)).toContain('src/segment');
    expect(errors).toBe(violations.length);
  });

  it('fails the command itself (what scripts/test.sh sees) when a rule breaks', () => {
    const run = depcruise(fixture);
    expect(run.stdout).toContain('connectors-only-pipeline-interfaces: connectors/kafka/job.ts → src/pipeline/stage.ts');
    expect(run.status).not.toBe(0);
  });

  it('lets the allowed imports through', () => {
    const { violations } = found;
    const allowed: Array<[string, string]> = [
      ['connectors/file/source.ts', 'src/pipeline/source.ts'],
      ['connectors/file/source.ts', 'src/util/prng.ts'],
      ['src/cli/main.ts', 'src/sim/index.ts'],
      ['src/cli/main.ts', 'connectors/kafka/job.ts'],
      ['src/cli/sim-ladder.ts', 'src/sim/index.ts'],
      ['src/sim/index.ts', 'src/llm/types.ts'],
      ['src/pipeline/stage.ts', 'src/pipeline/source.ts'],
      ['src/pipeline/source.ts', 'schemas/trace.ts'],
      ['src/ops/metrics.ts', 'src/pipeline/stage.ts'],
      ['src/cli/ops.ts', 'src/ops/metrics.ts'],
      ['src/pipeline/commit/shard-commit.ts', 'src/pipeline/storage/object-store.ts'],
      ['src/pipeline/range-commit.ts', 'src/pipeline/commit/layout.ts'],
      ['src/pipeline/range-commit.ts', 'src/pipeline/storage/object-store.ts'],
    ];
    for (const [from, to] of allowed) {
      expect(violations.filter((v) => v.from === from && v.to === to), show(violations)).toEqual([]);
    }
  });

  it('a connector entry registers through the pipeline contract and reaches only its own folder', () => {
    const { violations } = found;
    expect(violations, show(violations)).toContainEqual({ rule: 'connector-entries-load-their-own', from: 'connectors/kafka.ts', to: 'connectors/file/source.ts' });
    for (const [from, to] of [
      ['connectors/file.ts', 'src/pipeline/connector.ts'],
      ['connectors/file.ts', 'connectors/file/source.ts'],
    ]) {
      expect(violations.filter((v) => v.from === from && v.to === to), show(violations)).toEqual([]);
    }
  });

  it('holds on the real tree (src/, connectors/, schemas/)', () => {
    const { errors, violations } = cruise(root);
    expect(show(violations)).toBe('');
    expect(errors).toBe(0);
  });
});

/** `npm run lint:size` in `cwd`: biome with the project's biome.json; exit code and JSON report. */
function lintSize(cwd: string): { status: number | null; report: { diagnostics: { category: string; location: { path: string } }[] } } {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const [bin, ...args] = (pkg.scripts['lint:size'] ?? '').split(/\s+/);
  expect(bin).toBe('biome');
  const biomeBin = join(root, 'node_modules', '@biomejs', 'biome', 'bin', 'biome');
  const run = spawnSync(process.execPath, [biomeBin, ...args, '--reporter=json'], { cwd, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  return { status: run.status, report: JSON.parse(run.stdout) };
}

/** A function whose body has `lines` statements. */
function functionOf(name: string, lines: number): string {
  return [`export function ${name}(): number {`, '  let x = 0;', ...Array.from({ length: lines - 2 }, (_, i) => `  x += ${i};`), '  return x;', '}', ''].join('\n');
}

describe('function size rule', () => {
  let fixture: string;
  beforeAll(() => {
    fixture = mkdtempSync(join(tmpdir(), 'rj-size-'));
    copyFileSync(join(root, 'biome.json'), join(fixture, 'biome.json'));
    mkdirSync(join(fixture, 'src', 'util'), { recursive: true });
    mkdirSync(join(fixture, 'connectors'), { recursive: true });
    writeFileSync(join(fixture, 'src', 'util', 'long.ts'), functionOf('long', 85));
    writeFileSync(join(fixture, 'src', 'util', 'fits.ts'), functionOf('fits', 78));
    writeFileSync(join(fixture, 'connectors', 'long.ts'), functionOf('alsoLong', 90));
  });
  afterAll(() => rmSync(fixture, { recursive: true, force: true }));

  it('fails on a deliberately long function and names each file, not the one that fits', () => {
    const { status, report } = lintSize(fixture);
    expect(status).not.toBe(0);
    const files = report.diagnostics.filter((d) => d.category === 'lint/complexity/noExcessiveLinesPerFunction').map((d) => d.location.path).sort();
    expect(files).toEqual(['connectors/long.ts', 'src/util/long.ts']);
  });

  it('holds on the real tree', () => {
    const { status, report } = lintSize(root);
    expect(report.diagnostics.map((d) => d.location.path)).toEqual([]);
    expect(status).toBe(0);
  });
});
