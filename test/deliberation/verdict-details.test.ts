/**
 * The verdict_details table end to end: a deliberation run writes one row per verdict with the
 * Phase 1 judgements and the transcript, checked against the verdicts table and against the
 * audit log (the record of every model call, which until now alone kept them); the config key
 * and --verdict-details switch it on for other modes and off.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listCommitted } from '../../src/pipeline/commit/shard-commit.js';
import { LocalObjectStore } from '../../src/pipeline/storage/object-store.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { runCli } from '../helpers/cli.js';
import { LONG_TEST_MS, treeProbe } from '../helpers/progress.js';
import { fastSimConfig, tempDir, writeJsonl } from '../helpers/run-setup.js';

const DELIBERATION = {
  mode: 'deliberation',
  moderator: { id: 'moderator', endpoint: 'sim', model: 'sim-moderator' },
  deliberation: { max_turns: 9, adaptive: { enabled: true } },
};

interface Phase1 { seat_id: string; model: string; status: string; error: string | null; defects: unknown[] }
interface Turn { turn: number; round: number; speaker: string; content: string }
interface Call { phase: string; participant: string; tokens_in: number; outcome: string }

async function run(dir: string, extra: Record<string, unknown>, flags: string[] = [], n = 40) {
  const input = writeJsonl(join(dir, 'in.jsonl'), syntheticRecords(n, { seed: 83, minSteps: 5, maxSteps: 8 }));
  const out = join(dir, 'out');
  const audit = join(dir, 'audit.jsonl');
  const args = ['run', '--config', fastSimConfig(dir, extra), '--input', input, '--out', out, '--concurrency', '8', '--range-records', '20', '--progress', 'none', '--audit-log', audit, ...flags];
  const res = await runCli(args, { progress: treeProbe(out) });
  expect(res.code, res.stderr).toBe(0);
  const store = new LocalObjectStore(out);
  const tables = new Set((await listCommitted(store)).flatMap((m) => m.files.map((f) => f.table)));
  return { store, audit, tables };
}

function auditCalls(path: string): { record_id: string; phase: string; participant: string; outcome: string }[] {
  return readFileSync(path, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as { record_id: string; phase: string; participant: string; outcome: string });
}

describe('verdict_details', () => {
  it('deliberation writes it by default: Phase 1, transcript and termination agree with verdicts and the audit log', async () => {
    const { store, audit, tables } = await run(tempDir('vd-delib'), DELIBERATION);
    expect(tables.has('verdict_details')).toBe(true);
    const verdicts = new Map((await readCommittedRows(store, 'verdicts')).map((v) => [v.record_id as string, v]));
    const details = await readCommittedRows(store, 'verdict_details');
    expect(details).toHaveLength(verdicts.size);
    const calls = auditCalls(audit);
    let deliberated = 0;
    for (const d of details) {
      const id = d.record_id as string;
      const v = verdicts.get(id)!;
      expect(v, id).toBeDefined();
      expect([d.mode, d.termination_reason, d.rounds]).toEqual([v.mode, v.termination_reason, v.rounds]);
      const phase1 = d.phase1 as Phase1[];
      expect(phase1.map((p) => p.seat_id)).toEqual(['jury-0', 'jury-1', 'jury-2']);
      expect(phase1.filter((p) => p.status === 'ok').length).toBe(v.jurors_ok);
      const mine = calls.filter((c) => c.record_id === id && c.outcome === 'ok');
      expect(phase1.filter((p) => p.status === 'ok').map((p) => p.seat_id).sort()).toEqual(mine.filter((c) => c.phase === 'phase1').map((c) => c.participant).sort());
      const transcript = d.transcript as Turn[];
      expect(d.turns).toBe(transcript.length);
      // Juror turns are sequential: the audit log holds them in speaking order.
      expect(transcript.map((t) => t.speaker)).toEqual(mine.filter((c) => c.phase === 'juror_turn').map((c) => c.participant));
      expect(d.last_speaker).toBe(transcript.at(-1)?.speaker ?? null);
      for (const t of transcript) expect(t.content.length, id).toBeGreaterThan(0);
      const byCall = d.calls as Call[];
      expect(byCall.reduce((a, c) => a + c.tokens_in, 0)).toBe(v.tokens_in);
      if (transcript.length > 0) deliberated++;
      else expect(['skipped_empty', 'skipped_unanimous']).toContain(d.termination_reason);
    }
    expect(deliberated).toBeGreaterThan(5);
    // The simulated jurors miss and invent findings, so Phase 1 holds defects and some dissent survives.
    expect(details.filter((d) => (d.phase1 as Phase1[]).some((p) => p.defects.length > 0)).length).toBeGreaterThan(10);
    expect(details.filter((d) => (d.dissenting_views as string[]).length > 0).length).toBeGreaterThan(0);
  }, LONG_TEST_MS);

  it('--verdict-details off leaves it out of a deliberation run, every verdict still written', async () => {
    const { store, tables } = await run(tempDir('vd-off'), DELIBERATION, ['--verdict-details', 'off'], 20);
    expect(tables.has('verdict_details')).toBe(false);
    expect(await readCommittedRows(store, 'verdicts')).toHaveLength(20);
  }, LONG_TEST_MS);

  it('other modes: off by default, on with the config key (Phase 1 only, no transcript)', async () => {
    const off = await run(tempDir('vd-cons'), {}, [], 20);
    expect(off.tables.has('verdict_details')).toBe(false);
    const on = await run(tempDir('vd-cons-on'), { verdict_details: 'on' }, [], 20);
    const details = await readCommittedRows(on.store, 'verdict_details');
    expect(details).toHaveLength(20);
    for (const d of details) {
      expect([d.mode, d.termination_reason, d.turns, d.transcript, d.last_speaker]).toEqual(['consolidation', 'not_applicable', 0, [], null]);
      expect((d.phase1 as Phase1[]).map((p) => p.model)).toEqual(['sim-juror-a', 'sim-juror-b', 'sim-juror-c']);
      expect((d.calls as Call[]).map((c) => c.phase)).toContain('consolidation');
    }
  }, LONG_TEST_MS);

  it('refuses an unknown --verdict-details value in one line', async () => {
    const res = await runCli(['run', '--verdict-details', 'maybe', '--out', join(tempDir('vd-bad'), 'out')]);
    expect(res.code).toBe(2);
    expect(res.stderr.trim()).toBe('reasoning-jury: --verdict-details must be auto, on or off (got "maybe")');
  });
});
