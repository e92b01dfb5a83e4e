/**
 * The dry run's sample: the whole input is read once (to count it) through the same connector,
 * mapping and segmentation as `run`, and N of the records the jury would judge are kept by
 * reservoir sampling with a fixed seed, so the same command picks the same records.
 */
import type { JuryConfig } from '../../schemas/config.js';
import type { JudgeInput } from '../jury/judge.js';
import { MemoryObjectStore } from '../pipeline/storage/object-store.js';
import { intake, intakeSettings } from '../pipeline/steps/index.js';
import { prepareRecord } from '../pipeline/steps/segment.js';
import { createRng } from '../util/prng.js';
import { inputConnector, openInput } from './io.js';

export interface InputSample {
  sample: JudgeInput[];
  /** records the jury would judge (read, mapped and segmented) */
  judged: number;
  /** records that would become dead letters (no model call) */
  dead: number;
}

export async function sampleInput(url: string, config: JuryConfig, size: number, seed: number): Promise<InputSample> {
  const unbounded = inputConnector(url).unbounded;
  if (unbounded) throw new Error(unbounded);
  const input = await openInput(url, { config, store: new MemoryObjectStore(), committed: new Map(), rank: 0, worldSize: 1, untilCaughtUp: true, signal: new AbortController().signal });
  const rng = createRng(['estimate', seed]);
  const settings = intakeSettings(config);
  const out: InputSample = { sample: [], judged: 0, dead: 0 };
  try {
    for await (const item of input.source) {
      const { env } = intake(item, settings);
      const prepared = env.record ? prepareRecord(env.record, config) : null;
      if (!prepared?.ok) {
        out.dead += 1;
        continue;
      }
      out.judged += 1;
      // Reservoir sampling (Algorithm R): every record is kept with probability size / judged.
      if (out.sample.length < size) out.sample.push(prepared.input);
      else {
        const j = rng.int(0, out.judged - 1);
        if (j < size) out.sample[j] = prepared.input;
      }
    }
  } finally {
    await input.close();
  }
  return out;
}
