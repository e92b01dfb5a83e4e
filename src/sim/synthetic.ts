import type { TraceRecord } from '../../schemas/trace.js';
import { createRng } from '../util/prng.js';

const WORDS = 'we compute the value of x then substitute it into the equation so the total becomes twice the remaining amount which means each share is equal and the sum of both parts gives the answer'.split(' ');

/**
 * Labelled synthetic traces for tests and benchmarks when no benchmark data is at hand:
 * `nSteps` sentences of ProcessBench-like length, a share of them with a first error and
 * every later step marked erroneous (the propagation convention). Deterministic per seed.
 */
export function syntheticRecords(n: number, opts: { seed?: number; minSteps?: number; maxSteps?: number; wordsPerStep?: number; cleanShare?: number; prefix?: string } = {}): TraceRecord[] {
  const { seed = 1, minSteps = 6, maxSteps = 14, wordsPerStep = 40, cleanShare = 0.4, prefix = 'syn' } = opts;
  const out: TraceRecord[] = [];
  for (let i = 0; i < n; i++) {
    const rng = createRng(['synthetic', seed, i]);
    const nSteps = minSteps + Math.floor(rng.next() * (maxSteps - minSteps + 1));
    const steps: string[] = [];
    for (let s = 0; s < nSteps; s++) {
      const words: string[] = [];
      for (let w = 0; w < wordsPerStep; w++) words.push(WORDS[Math.floor(rng.next() * WORDS.length)]!);
      steps.push(`Step ${s + 1}: ${words.join(' ')} = ${Math.floor(rng.next() * 1000)}.`);
    }
    const first = rng.next() < cleanShare ? null : 1 + Math.floor(rng.next() * nSteps);
    out.push({
      id: `${prefix}-${String(i).padStart(6, '0')}`,
      problem: `Problem ${i}: find the value of x when ${Math.floor(rng.next() * 100)} items are shared between ${2 + Math.floor(rng.next() * 5)} people.`,
      trace: steps.join('\n\n'),
      final_solution: `x = ${Math.floor(rng.next() * 1000)}`,
      meta: { generator: ['model-a', 'model-b'][i % 2]!, synthetic: true },
      gold: first === null ? { error_steps: [], first_error_step: null } : { error_steps: Array.from({ length: nSteps - first + 1 }, (_, k) => first + k), first_error_step: first },
    });
  }
  return out;
}
