// With only real endpoints configured, the CLI must not load (or feed) the juror simulator: a
// loader hook in the spawned CLI writes down every module URL it loads, and none may be src/sim.
import { createServer, type Server } from 'node:http';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { runCli } from '../helpers/cli.js';

const RECORD = { id: 'r1', problem: 'What is 2 + 2?', trace: '2 + 2 = 4.\n\nSo the answer is 4.', final_solution: '4', gold: { error_steps: [2] } };

/** An OpenAI-compatible server that finds nothing wrong with any trace. */
function cleanJuror(): Promise<{ server: Server; url: string; calls: () => number }> {
  let calls = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      calls++;
      const body = {
        id: `chatcmpl-${calls}`,
        object: 'chat.completion',
        created: 0,
        model: 'real-juror',
        choices: [{ index: 0, message: { role: 'assistant', content: '{"negatives": []}' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`, calls: () => calls })));
}

/** `--import` file that registers a load hook appending each module URL to $RJ_LOADED_LOG. */
function writeLoaderHook(dir: string): string {
  writeFileSync(
    join(dir, 'hooks.mjs'),
    `import { appendFileSync } from 'node:fs';
let out;
export function initialize(data) { out = data.out; }
export async function load(url, context, next) {
  appendFileSync(out, url + '\\n');
  return next(url, context);
}
`,
  );
  const register = join(dir, 'register.mjs');
  writeFileSync(register, `import { register } from 'node:module';\nregister(new URL('./hooks.mjs', import.meta.url), { data: { out: process.env.RJ_LOADED_LOG } });\n`);
  return register;
}

/**
 * Loaded URLs as the modules behind them: a chunk of the bundled CLI stands for every module
 * esbuild put in it (dist/cli/meta.json, written by scripts/bundle.mjs), so loading a chunk
 * that holds any simulator module counts as loading the simulator.
 */
function modulesOf(urls: readonly string[]): string[] {
  const meta = JSON.parse(readFileSync('dist/cli/meta.json', 'utf8')) as { outputs: Record<string, { inputs: Record<string, unknown> }> };
  return urls.flatMap((u) => {
    if (!u.startsWith('file:')) return [u];
    const chunk = meta.outputs[relative(process.cwd(), fileURLToPath(u))];
    return chunk ? Object.keys(chunk.inputs).map((i) => pathToFileURL(resolve(i)).href) : [u];
  });
}

describe('a jury of real endpoints loads no simulator code', () => {
  let juror: Awaited<ReturnType<typeof cleanJuror>>;
  let dir: string;
  let register: string;
  let config: string;
  beforeAll(async () => {
    juror = await cleanJuror();
    dir = mkdtempSync(join(tmpdir(), 'rj-nosim-'));
    register = writeLoaderHook(dir);
    config = join(dir, 'jury.yaml');
    writeFileSync(
      config,
      YAML.stringify({
        endpoints: { real: { base_url: juror.url, max_concurrency: 4, max_retries: 0 } },
        jurors: [{ id: 'jury-0', endpoint: 'real', model: 'real-juror' }],
        mode: 'single',
        cache: { enabled: false, dir: join(dir, 'cache') },
      }),
    );
  });
  afterAll(() => juror.server.close());

  /** Runs the CLI under the hook; the module URLs it loaded (main thread and workers). */
  async function loadedBy(name: string, args: string[], stdin?: string): Promise<{ code: number | null; stderr: string; stdout: string; urls: string[] }> {
    const log = join(dir, `${name}.loaded`);
    const res = await runCli(args, { env: { NODE_OPTIONS: `--import ${register}`, RJ_LOADED_LOG: log }, timeoutMs: 60_000, ...(stdin !== undefined ? { stdin } : {}) });
    const loaded = existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];
    // The bin is the bundle: it, not the module-by-module build, is what ran.
    expect(loaded.some((u) => u.endsWith('/dist/cli/main.js'))).toBe(true);
    expect(loaded.some((u) => u.includes('/dist/src/'))).toBe(false);
    return { ...res, urls: modulesOf(loaded) };
  }

  const simModules = (urls: readonly string[]) => urls.filter((u) => u.includes('/src/sim/'));

  it('the hook sees what it should: the embedded default jury does load the simulator', async () => {
    const res = await loadedBy('default', ['judge', '--no-cache'], JSON.stringify(RECORD));
    expect(res.code, res.stderr).toBe(0);
    expect(res.urls.some((u) => u.endsWith('/dist/src/cli/main.js'))).toBe(true);
    expect(simModules(res.urls).length).toBeGreaterThan(0);
  });

  it('judge: the verdict comes from the real endpoint, and no module under src/sim is loaded', async () => {
    const before = juror.calls();
    const res = await loadedBy('judge', ['judge', '-c', config], JSON.stringify(RECORD));
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout).record_id).toBe('r1');
    expect(juror.calls()).toBeGreaterThan(before);
    expect(res.urls.some((u) => u.endsWith('/dist/src/jury/judge.js'))).toBe(true);
    expect(simModules(res.urls)).toEqual([]);
    expect(res.stderr).not.toMatch(/simulator/);
  });

  it('run: the stage judges labelled input files without loading src/sim', async () => {
    const input = join(dir, 'in.jsonl');
    writeFileSync(input, [RECORD, { ...RECORD, id: 'r2', problem: 'What is 3 + 3?' }].map((r) => JSON.stringify(r)).join('\n') + '\n');
    const res = await loadedBy('run', ['run', '-c', config, '-i', input, '-o', join(dir, 'out'), '--progress', 'none']);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/judged\s+2/);
    // The stage runs in a worker thread: the hook must have seen it there too.
    expect(res.urls.some((u) => u.endsWith('/dist/src/pipeline/stage.js'))).toBe(true);
    expect(simModules(res.urls)).toEqual([]);
    // Local files in and out: the Kafka and S3 clients are not loaded either (src/compose/io.ts).
    expect(res.urls.filter((u) => /\/node_modules\/(kafkajs|@aws-sdk)\//.test(u))).toEqual([]);
    expect(res.urls.filter((u) => /\/dist\/connectors\/(kafka|s3)\//.test(u))).toEqual([]);
    // JSONL in and no external seat: the Parquet decompressors stay unloaded (src/compose/runtime.ts).
    expect(res.urls.filter((u) => /\/node_modules\/(hyparquet-compressors|hysnappy)\//.test(u))).toEqual([]);
    // Without --metrics-port no metrics registry is built: prom-client stays unloaded.
    expect(res.urls.filter((u) => /\/node_modules\/prom-client\/|\/dist\/src\/ops\/metrics\.js$/.test(u))).toEqual([]);
  });
});

/** Every .ts file under `dir`, relative to the repository root. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => relative(process.cwd(), join(e.parentPath, e.name)));
}

/** The repository paths a file imports (static, re-exports and dynamic), packages left out. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specs = [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.[^']+)'/g)].map((m) => m[1]!);
  return specs.map((s) => relative(process.cwd(), resolve(dirname(file), s)).replace(/\.js$/, '.ts'));
}

describe('the simulator sits beside production code, not under it', () => {
  it('no production module imports src/sim (src/cli and the library entry points in src/api plug it in)', () => {
    const production = sources('src').filter((f) => !f.startsWith('src/cli/') && !f.startsWith('src/api/') && !f.startsWith('src/sim/'));
    const offenders = production.flatMap((f) => importsOf(f).filter((i) => i.startsWith('src/sim/')).map((i) => `${f} -> ${i}`));
    expect(offenders).toEqual([]);
  });

  it('src/sim imports only schemas/, llm contract types, src/prompts, src/segment and src/util', () => {
    const allowed = (i: string) => i.startsWith('schemas/') || i.startsWith('src/sim/') || i.startsWith('src/prompts/') || i.startsWith('src/segment/') || i.startsWith('src/util/') || i === 'src/llm/types.ts';
    const offenders = sources('src/sim').flatMap((f) => importsOf(f).filter((i) => !allowed(i)).map((i) => `${f} -> ${i}`));
    expect(offenders).toEqual([]);
  });
});
