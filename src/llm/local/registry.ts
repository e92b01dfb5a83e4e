/**
 * One engine per (model file, threads, context size) in this process, however many endpoints
 * or providers name it: a second copy of the weights would only halve the memory and the CPU
 * each gets. Counted references; the last release closes the engine.
 */
import { realpathSync } from 'node:fs';
import { loadEngine, type EngineOptions, type LocalEngine } from './engine.js';

interface Entry {
  refs: number;
  engine: Promise<LocalEngine>;
}

const engines = new Map<string, Entry>();

export interface EngineLease {
  engine: LocalEngine;
  /** Drops this reference; idempotent. */
  release(): Promise<void>;
}

export async function acquireEngine(opts: EngineOptions, load: (o: EngineOptions) => Promise<LocalEngine> = loadEngine): Promise<EngineLease> {
  const key = engineKey(opts);
  let entry = engines.get(key);
  if (!entry) {
    entry = { refs: 0, engine: load(opts) };
    engines.set(key, entry);
    // A failed load is not kept: the next caller tries again (the file may have appeared).
    entry.engine.catch(() => {
      if (engines.get(key) === entry) engines.delete(key);
    });
  }
  entry.refs += 1;
  let engine: LocalEngine;
  try {
    engine = await entry.engine;
  } catch (err) {
    entry.refs -= 1;
    throw err;
  }
  let released = false;
  const held = entry;
  return {
    engine,
    async release() {
      if (released) return;
      released = true;
      held.refs -= 1;
      if (held.refs > 0) return;
      if (engines.get(key) === held) engines.delete(key);
      await engine.close();
    },
  };
}

/** Engines currently open (tests check that nothing is left behind). */
export function openEngineCount(): number {
  return engines.size;
}

function engineKey(o: EngineOptions): string {
  let path = o.modelPath;
  try {
    path = realpathSync(path);
  } catch {
    // a missing file fails in load with a clear message; the key does not matter then
  }
  return JSON.stringify([path, o.threads, o.contextSize ?? null]);
}
