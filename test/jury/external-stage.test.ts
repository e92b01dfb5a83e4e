/**
 * External seats through the real stage (intake reads PRM scores, a dead letter for a record a
 * source lacks), an earlier run's verdict shards as a juror, deliberation with an external
 * seat, and the eval ladder and knockout over verdicts that have external seats.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openFileSource } from '../../connectors/file/index.js';
import type { JuryConfigInput } from '../../schemas/config.js';
import type { TraceRecord } from '../../schemas/trace.js';
import type { Verdict } from '../../schemas/verdict.js';
import { openRuntime } from '../../src/compose/runtime.js';
import type { AuditEntry } from '../../src/llm/audit.js';
import { defaultConfigInput, parseConfig } from '../../src/config/load.js';
import { goldOf } from '../../src/eval/gold.js';
import { knockout } from '../../src/eval/knockout.js';
import { ladderSystems } from '../../src/eval/ladder.js';
import { judgeRecord } from '../../src/jury/judge.js';
import { LocalObjectStore } from '../../src/pipeline/storage/object-store.js';
import { mapRecord, scoreFieldsOf } from '../../src/pipeline/record-mapping.js';
import { ShardCommitter } from '../../src/pipeline/commit/shard-commit.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { runStage } from '../../src/pipeline/stage.js';
import { intakeSettings, judgingSteps } from '../../src/pipeline/steps/index.js';
import { prepareRecord } from '../../src/pipeline/steps/segment.js';
import { createSimProvider, defaultProfile, withoutFaults } from '../../src/sim/index.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { tempDir } from '../helpers/run-setup.js';

const sim = () => createSimProvider({ profile: withoutFaults(defaultProfile()), latency: 'instant' });

/** One stage run over `rows`; returns the output folder and its committed rows. */
async function stageRun(dir: string, name: string, rows: readonly unknown[], over: Partial<JuryConfigInput>) {
  const input = join(dir, `${name}.jsonl`);
  writeFileSync(input, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const config = parseConfig({ ...defaultConfigInput(), cache: { enabled: false, dir: join(dir, 'c') }, verdict_details: 'on', ...over });
  const runtime = await openRuntime({ config, auditLogPath: null, providerFor: () => sim() });
  const source = await openFileSource(input);
  const out = join(dir, name);
  const store = new LocalObjectStore(out);
  try {
    const counters = await runStage({ source, intake: intakeSettings(config), steps: judgingSteps({ config, jury: runtime.jury }), committer: new ShardCommitter(store), concurrency: 4, range: { maxRecords: 100, maxChars: 1 << 30, sequentialUnits: true } });
    return { out, counters, verdicts: await readCommittedRows(store, 'verdicts'), dead: await readCommittedRows(store, 'dead_letters'), details: await readCommittedRows(store, 'verdict_details') };
  } finally {
    await source.close();
    await runtime.close();
  }
}

const nSteps = (r: TraceRecord) => prepareRecord(r, parseConfig(defaultConfigInput())).ok;

/** PRM-like scores: low on the gold erroneous steps, high elsewhere. */
function withScores(r: TraceRecord): Record<string, unknown> {
  const p = prepareRecord(r, parseConfig(defaultConfigInput()));
  if (!p.ok) throw new Error(p.error);
  const bad = new Set(r.gold?.error_steps ?? []);
  return { ...r, prm: { scores: p.input.steps.map((_, i) => (bad.has(i + 1) ? 0.1 : 0.9)) } };
}

describe('external seats in a run', () => {
  it('an earlier run\'s verdict shards and PRM scores sit as jurors; a record without scores is a dead letter; ladder and knockout include them', async () => {
    const dir = tempDir('external-stage');
    const records = syntheticRecords(6, { seed: 5 });
    expect(records.every(nSteps)).toBe(true);
    const earlier = await stageRun(dir, 'earlier', records, {});
    expect(earlier.verdicts).toHaveLength(6);

    const rows = records.map((r, i) => (i === 5 ? r : withScores(r)));
    const jurors = [
      ...defaultConfigInput().jurors.slice(0, 2),
      { id: 'earlier', kind: 'external', format: 'verdicts', path: earlier.out },
      { id: 'prm', kind: 'external', format: 'step_scores', field: 'prm.scores', on_missing: 'dead_letter' },
    ] as JuryConfigInput['jurors'];
    const run = await stageRun(dir, 'now', rows, { jurors, mode: 'union' });
    expect(run.verdicts).toHaveLength(5);
    expect(run.dead).toEqual([expect.objectContaining({ error: `record ${records[5]!.id} not in external source of seat prm (field "prm.scores" of the record)` })]);
    const phase1 = run.details.map((d) => (d.phase1 as Array<{ seat_id: string; model: string; status: string }>).map((j) => [j.seat_id, j.model, j.status]));
    for (const p of phase1) expect(p).toEqual([['jury-0', 'sim-juror-a', 'ok'], ['jury-1', 'sim-juror-b', 'ok'], ['earlier', 'external:verdicts', 'ok'], ['prm', 'external:step_scores', 'ok']]);
    // The earlier run's final defects come back as the seat's judgement, step for step.
    const earlierSteps = await readCommittedRows(new LocalObjectStore(earlier.out), 'defects');
    const runtime = await openRuntime({ config: parseConfig({ ...defaultConfigInput(), jurors, mode: 'union' }), auditLogPath: null, providerFor: () => sim() });
    try {
      const verdicts: Verdict[] = [];
      for (const r of rows.slice(0, 5)) {
        // The row read as a run reads it: the seat's `field` is mapped at intake.
        const m = mapRecord(r, runtime.jury.config.input.mapping, {}, scoreFieldsOf(runtime.jury.config));
        if (!m.ok) throw new Error(m.error);
        const p = prepareRecord(m.record, runtime.jury.config);
        if (!p.ok) throw new Error(p.error);
        verdicts.push(await judgeRecord(runtime.jury, p.input));
      }
      for (const v of verdicts) {
        const mine = v.phase1_judgements.find((j) => j.juror_id === 'earlier')!;
        const refs = earlierSteps.filter((d) => d.record_id === v.record_id).map((d) => d.statement_refs);
        expect(mine.defects.map((d) => d.statement_refs)).toEqual(refs);
        // PRM flags exactly the gold erroneous steps (scores 0.1 there).
        const gold = records.find((r) => r.id === v.record_id)!.gold!.error_steps!;
        expect(v.phase1_judgements.find((j) => j.juror_id === 'prm')!.defects.flatMap((d) => d.statement_refs)).toEqual(gold);
      }
      const systems = ladderSystems(verdicts).map((s) => s.name);
      expect(systems).toEqual(['solo jury-0', 'solo jury-1', 'solo earlier', 'solo prm', 'union', 'majority', 'jury (union)']);
      const golds = new Map(records.map((r) => [r.id, goldOf(r, 'all_steps')]));
      const rounds = await knockout(verdicts, golds, ['jury-0', 'jury-1', 'earlier', 'prm'], { threshold: 'minor', propagate: false, downTo: 2 });
      expect(rounds.map((r) => r.size)).toEqual([4, 3, 2]);
      expect(Object.keys(rounds[0]!.unique_gold_steps)).toEqual(['jury-0', 'jury-1', 'earlier', 'prm']);
      for (const r of rounds.slice(1)) expect(r.jurors).not.toContain(r.dropped);
      // Solo PRM scores perfect step recall on these records: the ladder's solo system says so.
      const prmSolo = ladderSystems(verdicts).find((s) => s.name === 'solo prm')!;
      for (const v of verdicts) expect([...prmSolo.predictions.get(v.record_id)!.impacts.keys()].sort((a, b) => a - b)).toEqual(records.find((r) => r.id === v.record_id)!.gold!.error_steps);
    } finally {
      await runtime.close();
    }
  });

  it('deliberation: external findings are openings; only model jurors speak, and the moderator reads them as openings', async () => {
    const dir = tempDir('external-delib');
    const records = syntheticRecords(3, { seed: 9, cleanShare: 0 });
    const critic = join(dir, 'critic.jsonl');
    writeFileSync(critic, records.map((r) => JSON.stringify({ id: r.id, prediction: (r.gold!.first_error_step ?? 0) - 1 })).join('\n') + '\n');
    const audit = join(dir, 'audit.jsonl');
    const config = parseConfig({
      ...defaultConfigInput(),
      mode: 'deliberation',
      moderator: { id: 'moderator', endpoint: 'sim', model: 'sim-moderator' },
      jurors: [...defaultConfigInput().jurors.slice(0, 2), { id: 'pb-critic', kind: 'external', format: 'first_error', path: critic }],
      cache: { enabled: false, dir: join(dir, 'c') },
    });
    const runtime = await openRuntime({ config, auditLogPath: audit, providerFor: () => sim() });
    try {
      for (const r of records) {
        const p = prepareRecord(r, config);
        if (!p.ok) throw new Error(p.error);
        const v = await judgeRecord(runtime.jury, p.input);
        expect(v.phase1_judgements.map((j) => [j.juror_id, j.ok])).toEqual([['jury-0', true], ['jury-1', true], ['pb-critic', true]]);
        expect(v.transcript.length).toBeGreaterThan(0);
        for (const t of v.transcript) expect(['jury-0', 'jury-1']).toContain(t.speaker);
        expect(v.usage.some((u) => u.participant === 'pb-critic')).toBe(false);
      }
    } finally {
      await runtime.close();
    }
    const entries = readFileSync(audit, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as AuditEntry);
    const moderator = entries.filter((e) => e.phase === 'moderator').map((e) => JSON.stringify(e.messages));
    expect(moderator.length).toBeGreaterThan(0);
    // The critic's opening is in what the moderator reads; no call was ever made for the seat.
    expect(moderator.every((m) => m.includes('pb-critic marks this step as the first error'))).toBe(true);
    expect(entries.some((e) => e.participant === 'pb-critic')).toBe(false);
  });
});
