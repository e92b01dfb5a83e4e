import type { Impact } from '../../schemas/defect.js';
import { EndpointConfig, ParticipantConfig } from '../../schemas/config.js';
import { createGateway, type Gateway } from '../../src/llm/gateway.js';
import type { ModelGateway, StructuredCall } from '../../src/llm/types.js';
import { createRng } from '../../src/util/prng.js';
import { parseProfile, type ModelEntryInput } from '../../src/sim/profile.js';
import { createSimProvider } from '../../src/sim/provider.js';
import { consolidationTask, phase1Task } from '../../src/sim/tasks.js';
import { createTaxonomyTasks, type TaxonomySimOptions } from '../../src/sim/taxonomy-tasks.js';
import { describeDefect } from '../../src/sim/text.js';

export const SEAT = ParticipantConfig.parse({ id: 'taxonomist', endpoint: 'sim', model: 'sim-taxonomist', temperature: 0, seed: 5 });

/** In-process gateway on the simulator with the jury tasks plus taxonomy tasks tuned by `sim`. */
export function simGateway(sim: Partial<TaxonomySimOptions> = {}, model: ModelEntryInput = {}): Gateway {
  const profile = parseProfile({ seed: 3, models: { default: { latency_ms: 0, ...model } } });
  const tasks = [consolidationTask, phase1Task, ...createTaxonomyTasks(sim)];
  return createGateway({
    endpoints: { sim: EndpointConfig.parse({ base_url: 'http://sim.invalid/v1', max_concurrency: 16, backoff_base_ms: 1, backoff_max_ms: 5 }) },
    prices: { 'sim-taxonomist': { input_per_mtok: 1, output_per_mtok: 2 } },
    cache: { enabled: false, dir: '/nonexistent' },
    auditLogPath: null,
    providerFor: () => createSimProvider({ profile, tasks }),
  });
}

/** Wraps a gateway to keep every structured call it makes. */
export function recording(g: ModelGateway): { gateway: ModelGateway; calls: Array<StructuredCall<unknown>> } {
  const calls: Array<StructuredCall<unknown>> = [];
  return {
    calls,
    gateway: {
      structured: (c) => {
        calls.push(c as StructuredCall<unknown>);
        return g.structured(c);
      },
      text: (c) => g.text(c),
    },
  };
}

const STEP_TEXT = [
  'We compute 14 * 0.25 = 3.75 and carry it into the total.',
  'Since the inequality a < b holds, we conclude b < a for all cases.',
  'By the formula for the area of a circle, A = 2 pi r, we get 12.56.',
  'The problem says n is odd, but we take n = 4 to simplify.',
  'Counting the cases x = 1 and x = 2 covers every possibility.',
  'Rounding 0.333 to 0.3 early, the final sum becomes 0.9.',
];

/** Defect texts the way the simulated jury writes them, over a few steps of ordinary maths. */
export function simDefects(n: number, seed = 1): Array<{ id: string; what_went_wrong: string; impact: Impact }> {
  const impacts: Impact[] = ['fatal', 'major', 'minor', 'neutral'];
  return Array.from({ length: n }, (_, i) => {
    const rng = createRng(['tax-test', seed, i]);
    const impact = impacts[rng.int(0, 3)]!;
    const ref = rng.int(1, STEP_TEXT.length);
    return { id: `r${Math.floor(i / 3)}#d${i % 3}`, what_went_wrong: describeDefect(rng, STEP_TEXT, [ref], impact, 40).what_went_wrong, impact };
  });
}
