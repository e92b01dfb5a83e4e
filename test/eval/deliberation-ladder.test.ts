import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { evaluate } from '../../src/eval/harness.js';
import { evalConfig, judgeRecords } from '../../src/eval/run.js';
import { DEFAULT_SCORE_OPTIONS } from '../../src/eval/score.js';
import { openRuntime } from '../../src/compose/runtime.js';
import { buildGoldIndex, createSimProvider, defaultProfile, withoutFaults } from '../../src/sim/index.js';
import { synthRecords } from '../sim/helpers.js';

/** Knockout and sweep re-run Phase 2 in the jury's own mode: here deliberation, Phase 1 fixed. */
describe('ladder experiments with a deliberating jury', () => {
  it('re-runs deliberation among the surviving jurors and under each swept moderator', async () => {
    const records = synthRecords(30, { steps: 6, errorRate: 0.25, seed: 'eval-deliberation' }).map((r) => ({ ...r, meta: { split: 'synthetic' } }));
    const provider = createSimProvider({ profile: withoutFaults(defaultProfile()), gold: buildGoldIndex(records, { mode: 'given' }), latency: 'instant' });
    const config = evalConfig(
      parseConfig({
        endpoints: { sim: { kind: 'simulator' } },
        jurors: [
          { id: 'jury-0', endpoint: 'sim', model: 'sim-juror-a' },
          { id: 'jury-1', endpoint: 'sim', model: 'sim-juror-b' },
          { id: 'jury-2', endpoint: 'sim', model: 'sim-juror-c' },
        ],
        moderator: { id: 'moderator', endpoint: 'sim', model: 'sim-consolidator' },
        mode: 'deliberation',
        cache: { enabled: false, dir: '.cache/none' },
      }),
    );
    const runtime = await openRuntime({ config, auditLogPath: null, providerFor: () => provider });
    try {
      const judged = await judgeRecords(runtime, records, { concurrency: 8 });
      expect(judged.verdicts).toHaveLength(30);
      const loaded = { benchmark: 'prmbench' as const, scope: 'all_steps' as const, records, skipped: [] };
      const { report, systems } = await evaluate({
        loaded,
        dataPath: 'synthetic',
        selected: records,
        verdicts: judged.verdicts,
        runtime,
        inputs: judged.inputs,
        knockout: true,
        moderators: [{ ...config.moderator!, model: 'sim-juror-a' }],
        score: { ...DEFAULT_SCORE_OPTIONS, resamples: 200 },
      });
      expect(report.systems.map((s) => s.system)).toContain('jury (deliberation)');
      expect(report.knockout.map((r) => r.size)).toEqual([3, 2]);
      const rerun = systems.find((s) => s.name === `deliberation moderated by sim-consolidator (2 jurors)`)!;
      expect(rerun.predictions.size).toBe(30);
      // Phase 1 usage of the two survivors only, then the deliberation's own calls.
      const phases = [...rerun.usage.values()].flat();
      const survivors = new Set(report.knockout[1]!.jurors);
      expect(new Set(phases.filter((u) => u.phase === 'phase1').map((u) => u.participant))).toEqual(survivors);
      const turns = phases.filter((u) => u.phase === 'juror_turn');
      expect(turns.length).toBeGreaterThan(0);
      expect(turns.every((u) => survivors.has(u.participant))).toBe(true); // the dropped juror never speaks
      const swept = systems.find((s) => s.name === 'deliberation moderated by sim-juror-a')!;
      expect(swept.kind).toBe('moderator');
      expect([...swept.usage.values()].flat().some((u) => u.phase !== 'phase1')).toBe(true);
    } finally {
      await runtime.close();
    }
  });
});
