import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openFileSource } from '../connectors/file/index.js';
import { DEFAULT_MAX_STEPS, type JuryConfigInput } from '../schemas/config.js';
import { defaultConfig, defaultConfigInput, parseConfig } from '../src/config/load.js';
import { openRuntime } from '../src/compose/runtime.js';
import { LocalObjectStore } from '../src/pipeline/storage/object-store.js';
import { prepareRecord } from '../src/pipeline/steps/segment.js';
import { mapRecord } from '../src/pipeline/record-mapping.js';
import { ShardCommitter } from '../src/pipeline/commit/shard-commit.js';
import { readCommittedRows } from '../src/pipeline/commit/shard-read.js';
import { runStage } from '../src/pipeline/stage.js';
import { intakeSettings, judgingSteps } from '../src/pipeline/steps/index.js';
import { createSimProvider, defaultProfile, withoutFaults } from '../src/sim/index.js';
import { tempDir } from './helpers/run-setup.js';

const steps = (n: number): string[] => Array.from({ length: n }, (_, k) => `s${k}.`);
const trace = (n: number): string => steps(n).join('\n\n');
const reason = (n: number, cap: number): string => `segmentation: ${n} steps, over the limit of ${cap} (segmentation.max_steps)`;

describe('one step cap: segmentation.max_steps', () => {
  it('defaults to 2000 and is the only cap, for given steps and for segmented text alike', () => {
    const config = defaultConfig();
    expect(config.segmentation.max_steps).toBe(DEFAULT_MAX_STEPS);
    expect(DEFAULT_MAX_STEPS).toBe(2000);
    const judge = (raw: object, c = config) => {
      const m = mapRecord(raw, c.input.mapping, { maxSteps: c.segmentation.max_steps });
      if (!m.ok) return m.error;
      const p = prepareRecord(m.record, c);
      return p.ok ? p.input.steps.length : p.error;
    };
    expect(judge({ id: 'a', problem: 'p', steps: steps(2000) })).toBe(2000);
    expect(judge({ id: 'a', problem: 'p', steps: steps(2001) })).toBe(reason(2001, 2000));
    expect(judge({ id: 'a', problem: 'p', steps: steps(20_000) })).toBe(reason(20_000, 2000));
    expect(judge({ id: 'a', problem: 'p', trace: trace(2000) })).toBe(2000);
    expect(judge({ id: 'a', problem: 'p', trace: trace(2001) })).toBe(reason(2001, 2000));
    // Raising the key raises the cap everywhere: no other limit is left at 10,000.
    const high = parseConfig({ ...defaultConfigInput(), segmentation: { max_steps: 12_000 } });
    expect(judge({ id: 'a', problem: 'p', steps: steps(10_001) }, high)).toBe(10_001);
    expect(judge({ id: 'a', problem: 'p', trace: trace(10_001) }, high)).toBe(10_001);
    expect(judge({ id: 'a', problem: 'p', steps: steps(12_001) }, high)).toBe(reason(12_001, 12_000));
  });

  it('the stage dead-letters records over the configured cap with that reason and judges the rest', async () => {
    const rows = [
      { id: 'ok', problem: 'p', steps: steps(3) },
      { id: 'given-over', problem: 'p', steps: steps(DEFAULT_MAX_STEPS + 1) },
      { id: 'given-huge', problem: 'p', steps: steps(20_000) },
      { id: 'text-over', problem: 'p', trace: trace(DEFAULT_MAX_STEPS + 1) },
    ];
    const { dead, judged } = await runOn(rows, {});
    expect(judged).toEqual(['ok']);
    expect(dead).toEqual([
      { id: 'given-over', error: reason(2001, 2000) },
      { id: 'given-huge', error: reason(20_000, 2000) },
      { id: 'text-over', error: reason(2001, 2000) },
    ]);
    const raised = await runOn(rows, { segmentation: { max_steps: 2001 } });
    expect(raised.judged).toEqual(['ok', 'given-over', 'text-over']);
    expect(raised.dead).toEqual([{ id: 'given-huge', error: reason(20_000, 2001) }]);
  }, 60_000);
});

/** The stage over `rows` with instant simulated jurors: ids judged and dead letters, in input order. */
async function runOn(rows: object[], over: Partial<JuryConfigInput>) {
  const dir = tempDir('step-cap');
  const input = join(dir, 'in.jsonl');
  writeFileSync(input, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const config = parseConfig({ ...defaultConfigInput(), cache: { enabled: false, dir: join(dir, 'c') }, ...over });
  const sim = createSimProvider({ profile: withoutFaults(defaultProfile()), latency: 'instant' });
  const runtime = await openRuntime({ config, auditLogPath: null, providerFor: () => sim });
  const source = await openFileSource(input);
  const store = new LocalObjectStore(join(dir, 'out'));
  try {
    await runStage({ source, intake: intakeSettings(config), steps: judgingSteps({ config, jury: runtime.jury }), committer: new ShardCommitter(store), concurrency: 2, range: { maxRecords: 100, maxChars: 1 << 30, sequentialUnits: true } });
    const byOffset = (a: Record<string, unknown>, b: Record<string, unknown>) => Number(a.source_offset) - Number(b.source_offset);
    const verdicts = (await readCommittedRows(store, 'verdicts')).sort(byOffset);
    const dead = (await readCommittedRows(store, 'dead_letters')).sort(byOffset);
    // The raw text of a huge row is truncated, so the id comes from its line (offset).
    const idOf = (d: Record<string, unknown>) => (rows[Number(d.source_offset)] as { id: string }).id;
    return { judged: verdicts.map((v) => String(v.record_id)), dead: dead.map((d) => ({ id: idOf(d), error: String(d.error) })) };
  } finally {
    await source.close();
    await runtime.close();
  }
}
