import PQueue from 'p-queue';
import type { JuryConfigInput } from '../../schemas/config.js';
import type { TraceRecord } from '../../schemas/trace.js';
import type { Verdict } from '../../schemas/verdict.js';
import { defaultConfigInput, parseConfig } from '../../src/config/load.js';
import { judgeRecord } from '../../src/jury/judge.js';
import { prepareRecord } from '../../src/pipeline/steps/segment.js';
import { openRuntime, type Runtime } from '../../src/compose/runtime.js';

/** A jury config whose seats all use one OpenAI-compatible endpoint at `baseUrl`. */
export function juryOn(baseUrl: string, over: Partial<JuryConfigInput> = {}, endpoint: Record<string, unknown> = {}): JuryConfigInput {
  return {
    endpoints: { sim: { base_url: baseUrl, max_concurrency: 8, timeout_ms: 5_000, backoff_base_ms: 10, backoff_max_ms: 200, ...endpoint } },
    // The embedded default's seats (3 jurors + consolidator), all on the endpoint `sim`.
    jurors: defaultConfigInput().jurors,
    consolidator: defaultConfigInput().consolidator!,
    mode: 'consolidation',
    cache: { enabled: false, dir: '.cache/unused' },
    prices: { 'sim-juror-a': { input_per_mtok: 0.15, output_per_mtok: 0.6 }, 'sim-consolidator': { input_per_mtok: 1, output_per_mtok: 4 } },
    ...over,
  };
}

/** Judge records with bounded concurrency; verdicts come back in input order. */
export async function judgeAll(runtime: Runtime, records: readonly TraceRecord[], concurrency = 32): Promise<Verdict[]> {
  const queue = new PQueue({ concurrency });
  return Promise.all(
    records.map((r) =>
      queue.add(async () => {
        const p = prepareRecord(r, runtime.jury.config);
        if (!p.ok) throw new Error(p.error);
        return judgeRecord(runtime.jury, p.input);
      }),
    ),
  ) as Promise<Verdict[]>;
}

export async function withRuntime<T>(config: JuryConfigInput, fn: (rt: Runtime) => Promise<T>, auditLogPath: string | null = null): Promise<T> {
  const rt = await openRuntime({ config: parseConfig(config), auditLogPath });
  try {
    return await fn(rt);
  } finally {
    await rt.close();
  }
}
