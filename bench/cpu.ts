import PQueue from 'p-queue';
import { parseConfig, defaultConfigInput } from '../src/config/load.js';
import { judgeRecord } from '../src/jury/judge.js';
import type { ChatRequest, ChatResponse, Provider } from '../src/llm/types.js';
import { prepareRecord } from '../src/pipeline/steps/segment.js';
import { openRuntime } from '../src/compose/runtime.js';
import { buildGoldIndex, createSimProvider, defaultProfile, withoutFaults } from '../src/sim/index.js';
import { benchRecords, fmt } from './common.js';

/**
 * CPU time the jury spends per trace, model wait excluded: jurors answer in-process at once
 * from replies recorded in a warm-up pass, so what is measured is prompt building, the gateway
 * (limits, retries, JSON extraction, zod validation, ledger) and verdict assembly.
 */
export async function benchCpu(n = 1000): Promise<string> {
  const { records, source } = benchRecords(n);
  const sim = createSimProvider({ profile: withoutFaults(defaultProfile()), gold: buildGoldIndex(records), latency: 'instant' });
  const recorded = new Map<string, ChatResponse>();
  // A plain string key: the harness must cost next to nothing next to what it measures.
  const requestKey = (req: ChatRequest) => `${req.model}\0${req.seed}\0${req.messages.map((m) => m.content).join('\0')}`;
  const recorder: Provider = {
    name: 'recorder',
    async complete(req: ChatRequest, signal: AbortSignal) {
      const res = await sim.complete(req, signal);
      recorded.set(requestKey(req), res);
      return res;
    },
  };
  const replay: Provider = {
    name: 'replay',
    async complete(req: ChatRequest) {
      const res = recorded.get(requestKey(req));
      if (!res) throw new Error('no recorded reply');
      return res;
    },
  };
  const config = parseConfig({ ...defaultConfigInput(), cache: { enabled: false, dir: '.cache/none' } });
  const inputs = records.map((r) => {
    const p = prepareRecord(r, config);
    if (!p.ok) throw new Error(p.error);
    return p.input;
  });
  async function pass(provider: Provider): Promise<{ cpuMs: number; wallMs: number; calls: number }> {
    const rt = await openRuntime({ config, auditLogPath: null, providerFor: () => provider });
    const queue = new PQueue({ concurrency: 16 });
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await Promise.all(inputs.map((input) => queue.add(() => judgeRecord(rt.jury, input))));
    const wallMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const calls = rt.gateway.ledger.summary().total.calls;
    await rt.close();
    return { cpuMs: (cpu.user + cpu.system) / 1000, wallMs, calls };
  }
  await pass(recorder); // records replies and warms the JIT
  await pass(replay);
  const runs = [await pass(replay), await pass(replay), await pass(replay)];
  const perTrace = runs.map((r) => r.cpuMs / n).sort((a, b) => a - b);
  const median = perTrace[1]!;
  const meanChars = inputs.reduce((a, i) => a + i.steps.reduce((b, s) => b + s.text.length, 0), 0) / n;
  return [
    `CPU per trace, 3 jurors + consolidation, instant in-process jurors (${n} traces, ${source}, mean ${fmt(meanChars, 0)} chars of steps):`,
    '',
    '| runs (ms CPU per trace) | median | calls per trace | target |',
    '|---|---|---|---|',
    `| ${perTrace.map((p) => fmt(p, 3)).join(', ')} | **${fmt(median, 3)} ms** | ${fmt(runs[0]!.calls / n, 1)} | ≤ 0.5 ms |`,
  ].join('\n');
}
