import type { JuryConfigInput } from '../../schemas/config.js';
import type { TraceRecord } from '../../schemas/trace.js';
import { openRuntime } from '../../src/compose/runtime.js';
import { parseConfig } from '../../src/config/load.js';
import { evalConfig, judgeRecords } from '../../src/eval/run.js';
import { buildGoldIndex, createSimProvider, parseProfile, type ProfileFileInput } from '../../src/sim/index.js';

/** Judge `records` through the real model layer with an in-process instant simulator; the ledger after it. */
export async function judgeOnSim(records: readonly TraceRecord[], profile: ProfileFileInput, config: JuryConfigInput, audit: string | null = null) {
  const provider = createSimProvider({ profile: parseProfile(profile), gold: buildGoldIndex(records, { mode: 'given' }), latency: 'instant' });
  const runtime = await openRuntime({ config: evalConfig(parseConfig(config)), auditLogPath: audit, providerFor: () => provider });
  try {
    const judged = await judgeRecords(runtime, records, { concurrency: 4 });
    return { verdicts: judged.verdicts, ledger: runtime.gateway.ledger.summary() };
  } finally {
    await runtime.close();
  }
}
