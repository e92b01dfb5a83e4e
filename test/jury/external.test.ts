/**
 * External judges as jurors (issue 16.2): seats of each format take part in union, majority,
 * consolidation and deliberation; a record their source lacks follows `on_missing`; they make
 * no call and change neither the prompt hash nor the calls the model jurors make.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { JuryConfigInput } from '../../schemas/config.js';
import type { ExternalSeatConfig } from '../../schemas/external.js';
import type { CallUsage } from '../../schemas/usage.js';
import { Verdict } from '../../schemas/verdict.js';
import { loadExternalSources } from '../../src/compose/external-sources.js';
import { defaultConfigInput, parseConfig } from '../../src/config/load.js';
import { fromFirstError, fromSections, fromStepScores } from '../../src/jury/external/convert.js';
import { ExternalRecordMissing } from '../../src/jury/external/index.js';
import { judgeRecord, type JudgeInput, type JuryContext } from '../../src/jury/judge.js';
import { hashMessages } from '../../src/llm/cache.js';
import { unpricedModels } from '../../src/llm/ledger.js';
import { type CallResult, type ModelGateway, type StructuredCall, type TextCall } from '../../src/llm/types.js';
import { loadPromptSet } from '../../src/prompts/templates.js';
import { segmentRecord } from '../../src/segment/index.js';
import { pyenvPython, tempDir, writeJsonl } from '../helpers/run-setup.js';

/** Records every call; Phase 1 and consolidation answer from `script`. */
class ScriptedGateway implements ModelGateway {
  calls: StructuredCall<unknown>[] = [];
  constructor(private readonly script: (call: StructuredCall<unknown>) => unknown) {}
  async structured<T>(call: StructuredCall<T>): Promise<CallResult<T>> {
    this.calls.push(call as StructuredCall<unknown>);
    const out = this.script(call as StructuredCall<unknown>);
    const usage: CallUsage = { phase: call.ctx.phase, participant: call.ctx.participant, model: call.seat.model, endpoint: 'scripted', tokens_in: 100, tokens_out: 20, cost_usd: 0.001, latency_ms: 5, attempts: 1, outcome: 'ok' };
    return { value: (call.schema as z.ZodType<T>).parse(out), raw: JSON.stringify(out), usage, cached: false };
  }
  async text(_call: TextCall): Promise<CallResult<string>> {
    throw new Error('not used');
  }
}

const prompts = loadPromptSet();
const steps = segmentRecord({ trace: 'One.\n\nTwo.\n\nThree.\n\nFour.\n\nFive.' });
const input = (id: string, scores?: Record<string, unknown>): JudgeInput => ({ id, problem: 'p', steps, ...(scores ? { scores } : {}) });
const neg = (refs: number[], impact = 'major') => ({ statement_refs: refs.map((r) => `STEP-${r}`), what_went_wrong: `wrong at ${refs}`, impact, evidence: 'e' });
const model = { id: 'llm', endpoint: 'sim', model: 'sim-juror-a' };

/** Critic files of the three recorded formats: r1 and r2 present, r3 absent from each. */
function writeSources(): { dir: string; parquet: string } {
  const dir = tempDir('external');
  writeJsonl(join(dir, 'critic.jsonl'), [
    { id: 'r1', defects: [{ statement_refs: ['STEP-3'], impact: 'fatal', what_went_wrong: 'critic: 3 is wrong', evidence: 'x', voters: ['someone'] }] },
    { id: 'r2', defects: [] },
  ]);
  writeJsonl(join(dir, 'sections.jsonl'), [
    { id: 'r1', error_section_numbers: [3, 4, 99] },
    { id: 'r2', error_section_numbers: [] },
  ]);
  const parquet = join(dir, 'processbench-preds.parquet');
  const py = pyenvPython();
  if (!py) throw new Error('the test venv (pyarrow) is needed to write the Parquet fixture');
  // ProcessBench predictions: 0-based earliest error, -1 for none; int64 indices, as pandas writes them.
  execFileSync(py, ['-c', `import pyarrow as pa, pyarrow.parquet as pq, sys\npq.write_table(pa.table({'uid': ['r1', 'r2'], 'prediction': pa.array([3, -1], pa.int64())}), sys.argv[1])`, parquet]);
  return { dir, parquet };
}

function seats(dir: string, parquet: string, over: Partial<ExternalSeatConfig> = {}): JuryConfigInput['jurors'] {
  return [
    model,
    { id: 'critic', kind: 'external', format: 'defects', path: join(dir, 'critic.jsonl'), ...over },
    { id: 'pb', kind: 'external', format: 'first_error', path: parquet, id_field: 'uid', ...over },
    { id: 'delta', kind: 'external', format: 'sections', path: join(dir, 'sections.jsonl'), ...over },
  ] as JuryConfigInput['jurors'];
}

async function context(over: Partial<JuryConfigInput>, gateway: ModelGateway): Promise<JuryContext> {
  const config = parseConfig({ ...defaultConfigInput(), ...over });
  const external = await loadExternalSources(config);
  return { config, gateway, prompts, configHash: 'cfg', ...(external ? { external } : {}) };
}

// The model juror flags step 2 only.
const llmSays = (c: StructuredCall<unknown>) => (c.ctx.phase === 'phase1' ? { negatives: [neg([2])] } : { negatives: [] });

describe('external seats: conversion', () => {
  const seat = (o: Partial<ExternalSeatConfig>) => ({ id: 's', kind: 'external', format: 'step_scores', field: 'f', id_field: 'id', polarity: 'correct', threshold: 0.5, severity: [{ at_least: 0, impact: 'major' }], impact: 'major', index_base: 0, on_missing: 'fail', ...o }) as ExternalSeatConfig;

  it('step scores: flagged at the threshold, severity by band, polarity, wrong lengths and values fail', () => {
    const bands = seat({ threshold: 0.6, severity: [{ at_least: 0.9, impact: 'fatal' }, { at_least: 0.6, impact: 'major' }] });
    const r = fromStepScores([0.95, 0.4, 0.05, 0.39, 0.41], 5, bands);
    expect(r.ok && r.defects.map((d) => [d.statement_refs, d.impact])).toEqual([[[2], 'major'], [[3], 'fatal'], [[4], 'major']]);
    const asError = fromStepScores(new Float64Array([0.7, 0.1]), 2, seat({ polarity: 'error' }));
    expect(asError.ok && asError.defects.map((d) => d.statement_refs[0])).toEqual([1]);
    expect(fromStepScores([0.1, 0.2], 3, seat({}))).toEqual({ ok: false, error: '2 step scores for 3 steps' });
    expect(fromStepScores([0.1, 'x'], 2, seat({})).ok).toBe(false);
    expect(fromStepScores([0.1, 1.5], 2, seat({})).ok).toBe(false);
  });

  it('first-error index by base, -1 as clean; sections dropping numbers outside the trace', () => {
    expect(fromFirstError(2, 5, seat({ format: 'first_error' }))).toMatchObject({ ok: true, defects: [{ statement_refs: [3] }] });
    expect(fromFirstError(2, 5, seat({ format: 'first_error', index_base: 1 }))).toMatchObject({ ok: true, defects: [{ statement_refs: [2] }] });
    expect(fromFirstError(-1, 5, seat({ format: 'first_error' }))).toEqual({ ok: true, defects: [], droppedRefs: 0 });
    expect(fromFirstError(5, 5, seat({ format: 'first_error' })).ok).toBe(false);
    expect(fromSections([4, 2, 7, 2], 5, seat({ format: 'sections', impact: 'minor' }))).toMatchObject({ ok: true, droppedRefs: 1, defects: [{ statement_refs: [2], impact: 'minor' }, { statement_refs: [4] }] });
  });
});

describe('external seats in the jury', () => {
  it('union: every format\'s findings, each attributed to its seat; no call, no usage for them', async () => {
    const { dir, parquet } = writeSources();
    const gw = new ScriptedGateway(llmSays);
    const v = await judgeRecord(await context({ jurors: seats(dir, parquet), mode: 'union' }, gw), input('r1'));
    expect(Verdict.parse(v)).toEqual(v);
    expect(v.phase1_judgements.map((j) => [j.juror_id, j.model, j.ok])).toEqual([['llm', 'sim-juror-a', true], ['critic', 'external:defects', true], ['pb', 'external:first_error', true], ['delta', 'external:sections', true]]);
    expect(v.defects.map((d) => [d.voters, d.statement_refs, d.impact])).toEqual([
      [['llm'], [2], 'major'],
      [['critic'], [3], 'fatal'],
      [['delta'], [3], 'major'],
      [['pb'], [4], 'major'],
      [['delta'], [4], 'major'],
    ]);
    // The source's own voters are not carried over; 99 is no step of a 5-step trace.
    expect(v.phase1_judgements.find((j) => j.juror_id === 'delta')!.dropped_refs).toBe(1);
    expect(gw.calls.map((c) => c.ctx.participant)).toEqual(['llm']);
    expect(v.usage.map((u) => u.participant)).toEqual(['llm']);
    expect(v.jurors_total).toBe(4);
  });

  it('majority: external seats are voters like model jurors (strictly more than half of those that succeeded)', async () => {
    const { dir, parquet } = writeSources();
    const v = await judgeRecord(await context({ jurors: seats(dir, parquet), mode: 'majority' }, new ScriptedGateway(llmSays)), input('r1'));
    // Step 3: critic + delta (2 of 4, not a strict majority). Step 4: pb + delta (2 of 4). Nothing reaches 3 of 4...
    expect(v.defects).toEqual([]);
    // ...until the model juror agrees on step 4.
    const agree = new ScriptedGateway((c) => ({ negatives: c.ctx.phase === 'phase1' ? [neg([4])] : [] }));
    const w = await judgeRecord(await context({ jurors: seats(dir, parquet), mode: 'majority' }, agree), input('r1'));
    expect(w.defects.map((d) => [d.statement_refs, d.voters])).toEqual([[[4], ['delta', 'llm', 'pb']]]);
    expect(w.dissenting_views.some((s) => s.startsWith('critic (fatal, STEP-3)'))).toBe(true);
  });

  it('consolidation: the consolidator sees external findings on its panel and may name them as voters', async () => {
    const { dir, parquet } = writeSources();
    const gw = new ScriptedGateway((c) => {
      if (c.ctx.phase === 'phase1') return { negatives: [neg([2])] };
      return { negatives: [{ ...neg([3], 'fatal'), voters: ['critic', 'delta', 'ghost'] }] };
    });
    const v = await judgeRecord(await context({ jurors: seats(dir, parquet), mode: 'consolidation' }, gw), input('r1'));
    const panel = JSON.stringify(gw.calls.find((c) => c.ctx.phase === 'consolidation')!.messages);
    for (const id of ['critic', 'pb', 'delta']) expect(panel).toContain(id);
    expect(panel).toContain('critic: 3 is wrong');
    expect(v.defects).toEqual([expect.objectContaining({ statement_refs: [3], impact: 'fatal', voters: ['critic', 'delta'], vote_count: 2 })]);
    expect(v.usage.map((u) => u.phase)).toEqual(['phase1', 'consolidation']);
  });

  it('change neither the prompt hash nor the model jurors\' calls (cache keys); the ledger asks no price for them', async () => {
    const { dir, parquet } = writeSources();
    const alone = new ScriptedGateway(llmSays);
    const a = await judgeRecord(await context({ jurors: [model], mode: 'union' }, alone), input('r1'));
    const withExt = new ScriptedGateway(llmSays);
    const b = await judgeRecord(await context({ jurors: seats(dir, parquet), mode: 'union' }, withExt), input('r1'));
    expect(b.prompt_hash).toBe(a.prompt_hash);
    expect(withExt.calls.map((c) => hashMessages(c.messages))).toEqual(alone.calls.map((c) => hashMessages(c.messages)));
    expect(withExt.calls.map((c) => c.seat)).toEqual(alone.calls.map((c) => c.seat));
    const config = parseConfig({ ...defaultConfigInput(), jurors: seats(dir, parquet), prices: { 'sim-juror-a': { input_per_mtok: 1, output_per_mtok: 1 }, 'sim-consolidator': { input_per_mtok: 1, output_per_mtok: 1 } } });
    expect(unpricedModels(config)).toEqual([]);
  });
});

describe('a record an external source lacks', () => {
  it('fail (default): the seat is a failed juror; the verdict is degraded and says which seat and why', async () => {
    const { dir, parquet } = writeSources();
    const v = await judgeRecord(await context({ jurors: seats(dir, parquet), mode: 'union' }, new ScriptedGateway(llmSays)), input('r3'));
    expect(v.jurors_total).toBe(4);
    expect(v.jurors_ok).toBe(1);
    expect(v.error).not.toBeNull(); // 1 of 4 is below the default minimum (2)
    expect(v.degraded_reason).toContain('only 1 of 4 jurors succeeded');
    expect(v.error).toContain(`critic: record r3 not in external source of seat critic (${join(dir, 'critic.jsonl')})`);
    // With min_jurors 1 the verdict is formed, degraded, naming each missing seat.
    const w = await judgeRecord(await context({ jurors: seats(dir, parquet), mode: 'union', min_jurors: 1 }, new ScriptedGateway(llmSays)), input('r3'));
    expect(w.error).toBeNull();
    expect(w.degraded).toBe(true);
    expect(w.degraded_reason).toMatch(/^3 of 4 jurors failed \(critic: record r3 not in external source of seat critic/);
  });

  it('abstain: the seat sits out that record (not seated, not degraded) and judges the others', async () => {
    const { dir, parquet } = writeSources();
    const ctx = await context({ jurors: seats(dir, parquet, { on_missing: 'abstain' }), mode: 'union' }, new ScriptedGateway(llmSays));
    const v = await judgeRecord(ctx, input('r3'));
    expect(v.phase1_judgements.map((j) => j.juror_id)).toEqual(['llm']);
    expect([v.jurors_total, v.jurors_ok, v.degraded, v.error]).toEqual([1, 1, false, null]);
    expect((await judgeRecord(ctx, input('r2'))).jurors_total).toBe(4);
  });

  it('dead_letter: thrown before any model call, so the stage dead-letters the record unjudged', async () => {
    const { dir, parquet } = writeSources();
    const gw = new ScriptedGateway(llmSays);
    const ctx = await context({ jurors: seats(dir, parquet, { on_missing: 'dead_letter' }), mode: 'union' }, gw);
    await expect(judgeRecord(ctx, input('r3'))).rejects.toThrow(ExternalRecordMissing);
    await expect(judgeRecord(ctx, input('r3'))).rejects.toThrow('record r3 not in external source of seat critic');
    expect(gw.calls).toEqual([]);
  });

  it('step scores: no value at the field is missing; a malformed value always fails the seat', async () => {
    const prm = { id: 'prm', kind: 'external', format: 'step_scores', field: 'prm_scores', on_missing: 'abstain' } as const;
    const ctx = await context({ jurors: [model, prm], mode: 'union' }, new ScriptedGateway(llmSays));
    expect((await judgeRecord(ctx, input('r1'))).jurors_total).toBe(1);
    const bad = await judgeRecord(ctx, input('r1', { prm: [0.9, 0.9] }));
    expect(bad.phase1_judgements[1]).toMatchObject({ juror_id: 'prm', ok: false, error: 'external source of seat prm: 2 step scores for 5 steps' });
    const good = await judgeRecord(ctx, input('r1', { prm: [0.9, 0.9, 0.1, 0.9, 0.9] }));
    expect(good.defects.map((d) => [d.voters, d.statement_refs])).toEqual([[['llm'], [2]], [['prm'], [3]]]);
  });

  it('a source listing one id twice, or a missing file, stops at start', async () => {
    const dir = tempDir('external-dup');
    writeJsonl(join(dir, 'dup.jsonl'), [{ id: 7, defects: [] }, { id: '7', defects: [] }]);
    const cfg = (path: string) => parseConfig({ ...defaultConfigInput(), mode: 'union', jurors: [model, { id: 'c', kind: 'external', format: 'defects', path }] });
    await expect(loadExternalSources(cfg(join(dir, 'dup.jsonl')))).rejects.toThrow(`record id "7" appears twice (again at ${join(dir, 'dup.jsonl')}:2)`);
    await expect(loadExternalSources(cfg(join(dir, 'nope.jsonl')))).rejects.toThrow('no file or folder at');
  });
});

describe('external seats in the config', () => {
  it('are checked on load; a relative path is the config file\'s, hashed as written', async () => {
    const { ConfigError, configHash, loadConfigFile } = await import('../../src/config/load.js');
    const { mkdirSync, writeFileSync } = await import('node:fs');
    const yaml = (jurors: string) => `endpoints:\n  sim: { kind: simulator }\nmode: union\njurors:\n  - { id: j0, endpoint: sim, model: m }\n${jurors}`;
    const dirs = [tempDir('external-cfg-a'), tempDir('external-cfg-b')];
    const hashes = dirs.map((d) => {
      mkdirSync(join(d, 'sub'));
      writeFileSync(join(d, 'critic.jsonl'), '');
      writeFileSync(join(d, 'sub', 'jury.yaml'), yaml('  - { id: c, kind: external, format: defects, path: ../critic.jsonl }\n'));
      const c = loadConfigFile(join(d, 'sub', 'jury.yaml'));
      expect(c.jurors[1]).toMatchObject({ path: join(d, 'critic.jsonl'), on_missing: 'fail' });
      return configHash(c);
    });
    expect(hashes[0]).toBe(hashes[1]);
    const bad = (jurors: string) => {
      const d = tempDir('external-cfg-bad');
      writeFileSync(join(d, 'jury.yaml'), yaml(jurors));
      return () => loadConfigFile(join(d, 'jury.yaml'));
    };
    expect(bad('  - { id: p, kind: external, format: step_scores }\n')).toThrow(ConfigError);
    expect(bad('  - { id: p, kind: external, format: step_scores }\n')).toThrow('jurors.1.field: required for format "step_scores"');
    expect(bad('  - { id: c, kind: external, format: defects, path: nope.jsonl }\n')).toThrow('jurors.1.path: no such file or folder');
    expect(bad('  - { id: j0, kind: external, format: step_scores, field: s }\n')).toThrow('duplicate juror id "j0"');
  });
});
