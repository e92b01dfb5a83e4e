// The packed tarball installs into an empty folder and runs the demo from another empty folder:
// bundled examples in, shards out, simulated jurors. Only the production dependencies are
// installed, so a module the runtime needs but package.json lists under devDependencies, or a
// runtime file missing from "files", fails here.
//
// Installing offline: the consumer folder gets a lockfile with package-lock.json's production
// entries (resolved URL + integrity), so npm takes every tarball from its cache (`npm ci` before
// the suite filled it) and asks the registry nothing. Optional dependencies (node-llama-cpp's
// prebuilt llama.cpp binaries, ~680 MB, for local models only) and install scripts are left
// out to keep the test cheap; the demo does not load them.
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { guardChild, runCli } from '../helpers/cli.js';
import { cpuProbe, LONG_TEST_MS, treeProbe } from '../helpers/progress.js';
import { tempDir } from '../helpers/run-setup.js';

interface LockEntry {
  dev?: boolean;
  [k: string]: unknown;
}

const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { name: string; version: string; license: string; dependencies: Record<string, string>; bin: Record<string, string>; engines: Record<string, string> };

/** package.json + lockfile of a folder whose only dependency is the tarball `file`. */
function consumerFolder(dir: string, file: string): void {
  const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as { packages: Record<string, LockEntry> };
  const spec = `file:${file}`;
  const packages: Record<string, unknown> = {
    '': { dependencies: { [pkg.name]: spec } },
    [`node_modules/${pkg.name}`]: { version: pkg.version, resolved: spec, license: pkg.license, dependencies: pkg.dependencies, bin: pkg.bin, engines: pkg.engines },
  };
  // The project's own tree is flat under node_modules/: the same paths serve the consumer.
  for (const [path, entry] of Object.entries(lock.packages)) if (path !== '' && !entry.dev) packages[path] = entry;
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'rj-install-check', private: true, dependencies: { [pkg.name]: spec } }, null, 2));
  writeFileSync(join(dir, 'package-lock.json'), JSON.stringify({ name: 'rj-install-check', lockfileVersion: 3, requires: true, packages }, null, 2));
}

/** Runs npm; killed only when neither its output nor its CPU time moves for the stall window. */
function npm(args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', [...args, '--no-audit', '--no-fund', '--loglevel', 'error'], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const guard = guardChild(child, { what: `npm ${args[0]}`, progress: cpuProbe(child.pid) });
    child.on('error', (e) => (guard.stop(), reject(e)));
    child.on('close', (code) => {
      guard.stop();
      if (code === 0) resolve(stdout);
      else reject(new Error(`npm ${args.join(' ')} exited ${code}: ${guard.stalled() ?? ''}\n${stderr.slice(-3000)}`));
    });
  });
}

/**
 * The library as a user gets it (docs/embedding.md): `import` from 'reasoning-jury' in the
 * consumer project, the TypeScript example type-checked against the shipped declarations, and
 * the three embedding examples run from the installed package against the simulator.
 */
async function usedAsALibrary(prefix: string, work: string): Promise<void> {
  const node = (args: string[], cwd: string) => execFileSync(process.execPath, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const names = node(['--input-type=module', '-e', "const m = await import('reasoning-jury'); console.log(Object.keys(m).sort().join(','))"], prefix);
  for (const name of ['createJury', 'juryStream', 'runStage', 'startJurySimulator', 'RecordError']) expect(names).toContain(name);
  // tsc from this checkout, the package and its declarations from the consumer's node_modules.
  copyFileSync(join('examples', 'embedding', 'typed.ts'), join(prefix, 'typed.ts'));
  writeFileSync(join(prefix, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2023', strict: true, noEmit: true, types: ['node'], typeRoots: [join(process.cwd(), 'node_modules', '@types')] }, files: ['typed.ts'] }));
  node([join(process.cwd(), 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], prefix);
  const examples = join(prefix, 'node_modules', pkg.name, 'examples', 'embedding');
  node([join(examples, 'jsonl-stream.mjs'), join(examples, '..', 'traces', 'demo.jsonl'), join(work, 'results.jsonl')], work);
  const rows = readFileSync(join(work, 'results.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { decision?: string });
  expect(rows.length).toBe(8);
  expect(rows.every((r) => ['keep', 'drop', 'review'].includes(r.decision ?? ''))).toBe(true);
  const stage = (out: string) => node([join(examples, 'custom-source.mjs'), out], work);
  expect(stage(join(work, 'stage'))).toMatch(/read 16, judged 16, dead letters 0, already committed 0, ranges committed 4/);
  expect(stage(join(work, 'stage'))).toMatch(/judged 0, dead letters 0, already committed 16/);
  await kafkaExample(examples, work);
}

/** Example 2 against the local broker (KAFKA_BROKERS), when one is up: 6 records produced, 6 results read. */
async function kafkaExample(examples: string, work: string): Promise<void> {
  if (!process.env.KAFKA_BROKERS) return void console.log('npm package: KAFKA_BROKERS unset, the kafkajs example is not run');
  const { Kafka, logLevel } = await import('kafkajs');
  const kafka = new Kafka({ clientId: 'rj-install', brokers: process.env.KAFKA_BROKERS.split(','), logLevel: logLevel.NOTHING });
  const topic = `rj-embed-${process.pid}-${Date.now()}`;
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
  await admin.disconnect();
  const producer = kafka.producer();
  await producer.connect();
  const lines = readFileSync(join('examples', 'traces', 'demo.jsonl'), 'utf8').split('\n').filter(Boolean).slice(0, 5);
  await producer.send({ topic, messages: [...lines, 'not json'].map((value) => ({ value })) });
  await producer.disconnect();
  const out = execFileSync(process.execPath, [join(examples, 'kafka-consumer.mjs'), topic, `${topic}-group`, '6'], { cwd: work, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const results = out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { decision?: string; dead_letter?: string });
  expect(results.length).toBe(6);
  expect(results.filter((r) => r.dead_letter !== undefined).length).toBe(1);
}

describe('npm package', () => {
  const root = tempDir('pack');
  afterAll(() => rmSync(root, { recursive: true, force: true })); // ~140 MB of node_modules

  it('the packed tarball installs into an empty folder and runs the demo from another', async () => {
    const prefix = join(root, 'install');
    const work = join(root, 'work');
    mkdirSync(prefix);
    mkdirSync(work);
    const [packed] = JSON.parse(await npm(['pack', '--json', '--pack-destination', prefix], process.cwd())) as Array<{ filename: string; files: Array<{ path: string }> }>;
    const shipped = packed!.files.map((f) => f.path);
    expect(shipped).toContain(pkg.bin['reasoning-jury']);
    // Sources stay out; the library's declarations (dist/types, public surface only) go in.
    expect(shipped.some((p) => p.startsWith('dist/bench/') || p.startsWith('test/') || (p.endsWith('.ts') && !p.startsWith('dist/types/') && p !== 'examples/embedding/typed.ts'))).toBe(false);
    expect(shipped).toContain('dist/types/src/api/index.d.ts');
    expect(shipped).toContain('dist/src/api/index.js');

    consumerFolder(prefix, packed!.filename);
    const t0 = Date.now();
    await npm(['ci', '--prefer-offline', '--omit=optional', '--ignore-scripts'], prefix);
    const installS = (Date.now() - t0) / 1000;
    const modules = join(prefix, 'node_modules');
    // Production dependencies only: what the demo needs must not come from a dev dependency.
    for (const dev of ['typescript', 'vitest', 'dependency-cruiser']) expect(existsSync(join(modules, dev)), dev).toBe(false);

    const bin = join(modules, '.bin', 'reasoning-jury');
    expect(execFileSync(bin, ['--version'], { cwd: work, encoding: 'utf8' }).trim()).toBe(pkg.version);
    const out = join(work, 'shards');
    const res = await runCli(['run', '--out', out, '--progress', 'none'], { cwd: work, bin, progress: treeProbe(out) });
    expect(res.code, res.stderr).toBe(0);
    // The bundled examples, from the installed package, not from this checkout.
    expect(res.stderr).toContain(join(modules, pkg.name, 'examples', 'traces'));
    const examples = readFileSync(join('examples', 'traces', 'demo.jsonl'), 'utf8').split('\n').filter(Boolean).length;
    expect(res.stdout).toMatch(new RegExp(`records in\\s+${examples}\\b`));
    expect(readdirSync(join(out, '_commits')).filter((f) => f.endsWith('.json')).length).toBeGreaterThan(0);
    expect(readdirSync(join(out, 'verdicts', 'source=file')).some((f) => f.endsWith('.parquet'))).toBe(true);
    // The shipped taxonomy, which `run` does not read, through the command that does.
    expect(execFileSync(bin, ['taxonomy', 'validate'], { cwd: work, encoding: 'utf8' })).toMatch(/8 categories, 56 leaves/);
    await usedAsALibrary(prefix, work);
    console.log(`npm package: ${shipped.length} files packed; offline install of production dependencies ${installS.toFixed(1)} s`);
  }, LONG_TEST_MS);
});
