import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchmarkName, LoadedBenchmark } from '../types.js';
import { loadBigBenchMistake } from './bigbench-mistake.js';
import { loadDeltaBench } from './deltabench.js';
import { loadHard2Verify } from './hard2verify.js';
import { loadMrBen } from './mr-ben.js';
import { loadPrmBench, type PrmOptions } from './prmbench.js';
import { loadProcessBenchSet } from './processbench.js';

export type AdapterOptions = PrmOptions;

const LOADERS: Record<BenchmarkName, (path: string, opts: AdapterOptions) => LoadedBenchmark> = {
  processbench: (p) => loadProcessBenchSet(p),
  prmbench: (p, o) => loadPrmBench(p, o),
  'bigbench-mistake': (p) => loadBigBenchMistake(p),
  'mr-ben': (p) => loadMrBen(p),
  deltabench: (p) => loadDeltaBench(p),
  hard2verify: (p) => loadHard2Verify(p),
};

/** Load a benchmark file or folder in its own format. Record ids are stable across loads. */
export function loadBenchmark(name: BenchmarkName, path: string, opts: AdapterOptions = {}): LoadedBenchmark {
  if (!existsSync(path)) throw new Error(`${name} data not found at ${path}`);
  return LOADERS[name](path, opts);
}

/** Where a benchmark's files sit inside the shared data folder (DeltaBench/Hard2Verify are not shipped). */
export function defaultDataPath(name: BenchmarkName, sharedDir: string): string {
  return join(sharedDir, name);
}
