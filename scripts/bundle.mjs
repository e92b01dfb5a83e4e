// Bundles the compiled CLI (dist/src/cli, from tsc) into dist/cli: the bin and the run worker
// as two entry points with shared chunks. Loading ~640 ES modules one by one costs a process
// about half a CPU-second before its first record (resolution, package.json lookups, one file
// read each); a few chunks load in a fraction of that. tsc stays the compiler of record: this
// step only joins its output. Lazily imported parts (Kafka, S3, the simulator, metrics) stay in
// their own chunks, so a run still loads only what it uses; dist/cli/meta.json maps every chunk
// to the modules it holds (test/cli/no-simulator-loaded.test.ts reads it).
import { rmSync, writeFileSync } from 'node:fs';
import { build } from 'esbuild';

rmSync('dist/cli', { recursive: true, force: true }); // no stale chunk from an earlier build
const result = await build({
  entryPoints: ['dist/src/cli/main.js', 'dist/src/cli/run-worker.js'],
  outdir: 'dist/cli',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node22.12', // the oldest Node package.json "engines" allows
  sourcemap: 'linked',
  metafile: true,
  logLevel: 'warning',
  // Left in node_modules: parquet-wasm finds its .wasm beside its own files, node-llama-cpp
  // ships native binaries, pino starts worker threads from its own folder; pino and yaml are
  // also loaded through createRequire (off the startup path), which esbuild does not follow,
  // so bundling their static imports would load a second copy beside the one require finds.
  external: ['parquet-wasm', 'node-llama-cpp', 'pino', 'yaml'],
  // CommonJS dependencies (kafkajs, parts of the AWS SDK) call require(); an ES module has none.
  banner: { js: "import { createRequire as __rjRequire } from 'node:module'; const require = __rjRequire(import.meta.url);" },
});
writeFileSync('dist/cli/meta.json', JSON.stringify(result.metafile));
