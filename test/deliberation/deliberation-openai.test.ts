import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TraceRecord } from '../../schemas/trace.js';
import { Verdict } from '../../schemas/verdict.js';
import { mergedUnion } from '../../src/jury/aggregate.js';
import { DELIB_BLOCK } from '../../src/jury/deliberation/render.js';
import { segmentRecord } from '../../src/segment/index.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { judgeAll, withRuntime } from '../helpers/jury.js';
import { deliberationJury, profileWith, readAudit, withSim } from './helpers.js';

/** Real `openai` client -> loopback HTTP -> simulator playing jurors, moderator and extraction. */

/** Synthetic traces with canaries in problem and final response, to grep the moderator's requests for. */
function records(n: number, seed: number, cleanShare = 0.2): TraceRecord[] {
  return syntheticRecords(n, { seed, minSteps: 5, maxSteps: 8, wordsPerStep: 24, cleanShare }).map((r) => ({
    ...r,
    problem: `${r.problem} [problem-canary-${r.id}]`,
    final_solution: `${r.final_solution} [final-canary-${r.id}]`,
  }));
}

const JURORS = ['jury-0', 'jury-1', 'jury-2'];
const audited = () => join(mkdtempSync(join(tmpdir(), 'rj-delib-')), 'audit.jsonl');

describe('a full deliberation over the real client', () => {
  it('verdicts carry transcript, phase 1, rounds and termination; the moderator never sees problem or trace', async () => {
    const recs = records(12, 41);
    const audit = audited();
    const verdicts = await withSim(profileWith(), recs, (sim) => withRuntime(deliberationJury(sim.url), (rt) => judgeAll(rt, recs, 6), audit));
    for (const v of verdicts) {
      expect(Verdict.parse(v)).toEqual(v);
      expect(v.mode).toBe('deliberation');
      expect(v.phase1_judgements.map((j) => j.juror_id)).toEqual(JURORS);
      expect(['no_new_arguments', 'universal_agreement', 'cycling', 'turn_cap']).toContain(v.termination_reason);
      expect(v.transcript.map((t) => t.turn)).toEqual(v.transcript.map((_, i) => i + 1));
      expect(v.rounds).toBe(v.transcript[v.transcript.length - 1]!.round);
      // Every completed logical round heard every juror.
      for (let r = 1; r < v.rounds; r++) expect(new Set(v.transcript.filter((t) => t.round === r).map((t) => t.speaker))).toEqual(new Set(JURORS));
      expect(new Set(v.usage.map((u) => u.phase))).toEqual(new Set(['phase1', 'moderator', 'juror_turn', 'extraction']));
      for (const d of v.defects) for (const voter of d.voters ?? []) expect(JURORS).toContain(voter);
      expect(v.degraded).toBe(false);
    }
    expect(new Set(verdicts.map((v) => v.termination_reason)).size).toBeGreaterThanOrEqual(1);

    const lines = readAudit(audit);
    const blind = lines.filter((l) => l.phase === 'moderator' || l.phase === 'extraction');
    const turns = lines.filter((l) => l.phase === 'juror_turn');
    expect(blind.length).toBeGreaterThan(recs.length * 2);
    const rec = new Map(recs.map((r) => [r.id, r]));
    for (const l of blind) {
      const text = l.messages.map((m) => m.content).join('\n');
      const r = rec.get(l.record_id)!;
      for (const marker of ['problem-canary', 'final-canary', '<<<BEGIN PROBLEM', '<<<BEGIN REASONING TRACE', '<<<BEGIN FINAL RESPONSE']) expect(text).not.toContain(marker);
      for (const step of segmentRecord(r)) expect(text).not.toContain(step.text);
    }
    // The same grep does find them where they belong: in the jurors' turn prompts.
    for (const l of turns) expect(l.messages[1]!.content).toContain(`[problem-canary-${l.record_id}]`);
    // Each juror turn opens with that record's Phase 1 prompt, up to the end of the final response.
    for (const l of turns) {
      const p1 = lines.find((x) => x.phase === 'phase1' && x.record_id === l.record_id)!.messages[1]!.content;
      const end = p1.indexOf('>>>', p1.indexOf('<<<END FINAL RESPONSE')) + 3;
      expect(l.messages[1]!.content.startsWith(p1.slice(0, end))).toBe(true);
    }
  });
});

describe('every ending, on demand', () => {
  const withFindings = records(8, 43, 0);
  const cases: Array<[string, Parameters<typeof profileWith>, Record<string, unknown>]> = [
    ['universal_agreement', [{ deliberation: { endorse_true: 1, endorse_false: 1, agree_all_rate: 1, new_defect_rate: 0 } }], {}],
    // Everyone disputes what others found and nobody gives way: disputes stay open until nobody has anything new.
    ['no_new_arguments', [{ deliberation: { agree_all_rate: 0, new_defect_rate: 0, endorse_true: 0, endorse_false: 0, concede_true: 0, concede_false: 0 } }, { 'sim-juror-c': { recall: 0, false_positive_rate: 0 } }], { max_turns: 60 }],
    ['cycling', [{ deliberation: { repeat_rate: 1, endorse_true: 0, endorse_false: 0 } }, { 'sim-juror-a': { recall: 1 }, 'sim-juror-b': { recall: 0.4 }, 'sim-juror-c': { recall: 0.4 } }], {}],
    ['turn_cap', [{ deliberation: { endorse_true: 0, endorse_false: 0, concede_true: 0, concede_false: 0, restate_rate: 1, new_defect_rate: 0, terminate: false } }], { max_turns: 9 }],
  ];
  it.each(cases)('%s', async (reason, profileArgs, deliberation) => {
    const verdicts = await withSim(profileWith(...profileArgs), withFindings, (sim) => withRuntime(deliberationJury(sim.url, { deliberation }), (rt) => judgeAll(rt, withFindings, 4)));
    expect(verdicts.map((v) => v.termination_reason)).toEqual(withFindings.map(() => reason));
    for (const v of verdicts) expect(v.degraded).toBe(false);
    if (reason === 'turn_cap') for (const v of verdicts) expect(v.transcript).toHaveLength(9);
    if (reason === 'cycling') {
      // The last round repeated earlier messages word for word.
      for (const v of verdicts) {
        const last = v.transcript.filter((t) => t.round === v.rounds);
        for (const t of last) expect(v.transcript.some((e) => e.turn < t.turn && e.speaker === t.speaker && e.message === t.message)).toBe(true);
      }
    }
    if (reason === 'universal_agreement') for (const v of verdicts) expect(v.defects.every((d) => d.vote_count === 3)).toBe(true);
  });

  it('turn_cap also backs up a moderator that never stops, with a tight cap', async () => {
    const verdicts = await withSim(profileWith(), withFindings, (sim) => withRuntime(deliberationJury(sim.url, { deliberation: { max_turns: 2 } }), (rt) => judgeAll(rt, withFindings, 4)));
    for (const v of verdicts) expect([v.termination_reason, v.transcript.length, v.rounds]).toEqual(['turn_cap', 2, 1]);
  });
});

describe('fault tolerance (App. F) over the real client', () => {
  const recs = records(8, 47, 0);

  it('a moderator that only returns broken JSON: round-robin turns, the fixed instruction, backstop endings', async () => {
    const verdicts = await withSim(profileWith({}, { 'sim-moderator': { deliberation: { moderator_fail_rate: 1 } } }), recs, (sim) =>
      withRuntime(deliberationJury(sim.url, { deliberation: { max_turns: 30 } }), (rt) => judgeAll(rt, recs, 4)),
    );
    for (const v of verdicts) {
      expect(v.transcript.map((t) => t.speaker)).toEqual(v.transcript.map((_, i) => JURORS[i % 3]));
      expect(v.degraded_reason).toMatch(/moderator failed 2 of 2 decisions \(.*invalid JSON.*\); round-robin order used instead; not asked again/);
      expect(v.usage.filter((u) => u.phase === 'moderator').map((u) => u.outcome)).toEqual(['error', 'error']);
      expect(['no_new_arguments', 'universal_agreement', 'cycling']).toContain(v.termination_reason);
      expect(v.usage.filter((u) => u.phase === 'extraction').map((u) => u.outcome)).toEqual(['ok']);
    }
  });

  it('a juror whose turns come back empty is skipped, then removed; the other two finish the deliberation', async () => {
    const verdicts = await withSim(profileWith({}, { 'sim-juror-c': { deliberation: { turn_fail_rate: 1 } } }), recs, (sim) => withRuntime(deliberationJury(sim.url), (rt) => judgeAll(rt, recs, 4)));
    for (const v of verdicts) {
      expect(v.transcript.some((t) => t.speaker === 'jury-2')).toBe(false);
      expect(v.usage.filter((u) => u.phase === 'juror_turn' && u.participant === 'jury-2')).toHaveLength(2);
      expect(v.degraded_reason).toMatch(/juror turns skipped: jury-2 at turn \d+ \(empty reply\); jury-2 at turn \d+ \(empty reply\); removed after 2 failed turns in a row: jury-2/);
      expect(v.termination_reason).not.toBe('error');
      expect(v.phase1_judgements.find((j) => j.juror_id === 'jury-2')!.ok).toBe(true); // still part of the panel
    }
  });

  it('when two of three jurors drop out the deliberation stops with "error" and still extracts a verdict', async () => {
    const broken = { deliberation: { turn_fail_rate: 1 } };
    const verdicts = await withSim(profileWith({}, { 'sim-juror-b': broken, 'sim-juror-c': broken }), recs, (sim) => withRuntime(deliberationJury(sim.url), (rt) => judgeAll(rt, recs, 4)));
    for (const v of verdicts) {
      expect(v.termination_reason).toBe('error');
      expect(v.degraded_reason).toMatch(/removed after 2 failed turns in a row: jury-1, jury-2; deliberation stopped with 1 juror\(s\) left|deliberation stopped with 1 juror\(s\) left/);
      expect(v.usage.filter((u) => u.phase === 'extraction')).toHaveLength(1);
    }
  });

  it('an extraction that fails twice falls back to the Phase 1 aggregate, marked degraded', async () => {
    const verdicts = await withSim(profileWith({}, { 'sim-moderator': { deliberation: { extraction_fail_rate: 1 } } }), recs, (sim) => withRuntime(deliberationJury(sim.url), (rt) => judgeAll(rt, recs, 4)));
    for (const v of verdicts) {
      expect(v.degraded_reason).toMatch(/extraction failed \(.*invalid JSON after one re-ask.*\); verdict aggregated from phase 1/);
      expect(v.defects).toEqual(mergedUnion(v.phase1_judgements));
      expect(v.transcript.length).toBeGreaterThan(0);
      expect(v.termination_reason).not.toBe('error');
    }
  });
});

describe('the majority is computed from the jurors that succeeded', () => {
  it('one of three jurors failed in Phase 1: consensus needs 2 of 2, and a 1-of-2 finding stands only if nobody disputed it', async () => {
    const recs = records(14, 53, 0);
    const audit = audited();
    const verdicts = await withSim(profileWith({}, { 'sim-juror-c': { rate_malformed_json: 1, malformed_repairable: 0 } }), recs, (sim) => withRuntime(deliberationJury(sim.url), (rt) => judgeAll(rt, recs, 4), audit));
    let dissent = 0;
    let pairs = 0;
    for (const v of verdicts) {
      expect(v.jurors_ok).toBe(2);
      expect(new Set(v.transcript.map((t) => t.speaker))).toEqual(new Set(['jury-0', 'jury-1']));
      for (const d of v.defects) {
        expect(d.voters!.every((x) => x === 'jury-0' || x === 'jury-1')).toBe(true);
        if (d.vote_count === 2) pairs++;
        else {
          expect(d.vote_count).toBe(1);
          const disputed = v.transcript.some((t) => t.message.split('\n').some((line) => line.startsWith('I disagree with') && line.includes(`on [STEP-${d.statement_refs[0]}]`)));
          expect(disputed).toBe(false);
        }
      }
      dissent += v.dissenting_views.length;
    }
    expect(pairs).toBeGreaterThan(0);
    expect(dissent).toBeGreaterThan(0); // disputed 1-of-2 findings exist and did not pass
    const ext = readAudit(audit).filter((l) => l.phase === 'extraction');
    expect(ext).toHaveLength(recs.length);
    for (const l of ext) {
      expect(l.messages[1]!.content).toContain('- Majority needed for consensus: 2 of 2');
      expect(l.messages[1]!.content).toContain('- Panelists who completed their independent audit: 2 (jury-0, jury-1)');
    }
  });

  it('two of five failed: 2 of the 3 remaining carry a finding (a fixed majority of five would need 3)', async () => {
    const recs = records(10, 59, 0);
    const audit = audited();
    const five = {
      jurors: [
        { id: 'jury-0', endpoint: 'sim', model: 'sim-juror-a' },
        { id: 'jury-1', endpoint: 'sim', model: 'sim-juror-b' },
        { id: 'jury-2', endpoint: 'sim', model: 'sim-juror-c' },
        { id: 'jury-3', endpoint: 'sim', model: 'sim-juror-d' },
        { id: 'jury-4', endpoint: 'sim', model: 'sim-juror-e' },
      ],
    };
    const verdicts = await withSim(profileWith({}, { 'sim-juror-d': { rate_malformed_json: 1, malformed_repairable: 0 }, 'sim-juror-e': { rate_malformed_json: 1, malformed_repairable: 0 } }), recs, (sim) => withRuntime(deliberationJury(sim.url, five), (rt) => judgeAll(rt, recs, 4), audit));
    expect(verdicts.every((v) => v.jurors_ok === 3)).toBe(true);
    const twoOfThree = verdicts.flatMap((v) => v.defects).filter((d) => d.vote_count === 2);
    expect(twoOfThree.length).toBeGreaterThan(0);
    for (const l of readAudit(audit).filter((x) => x.phase === 'extraction')) expect(l.messages[1]!.content).toContain('- Majority needed for consensus: 2 of 3');
  });
});

describe('adaptive phase 2', () => {
  const adaptive = { deliberation: { adaptive: { enabled: true } } };
  const identical = { recall: 1, false_positive_rate: 0, severity_mix: { major: 1 }, adjacent_rate: 0 };

  it('skips when every juror found nothing: no Phase 2 call at all', async () => {
    const recs = records(6, 61);
    const verdicts = await withSim(profileWith({ recall: 0, false_positive_rate: 0 }), recs, (sim) => withRuntime(deliberationJury(sim.url, adaptive), (rt) => judgeAll(rt, recs)));
    for (const v of verdicts) {
      expect([v.termination_reason, v.rounds, v.transcript, v.defects, v.confidence]).toEqual(['skipped_empty', 0, [], [], 1]);
      expect(v.usage.map((u) => u.phase)).toEqual(['phase1', 'phase1', 'phase1']);
    }
  });

  it('skips when all jurors cite the same steps with the same severities: their findings are the verdict', async () => {
    const recs = records(6, 67, 0);
    const verdicts = await withSim(profileWith(identical), recs, (sim) => withRuntime(deliberationJury(sim.url, adaptive), (rt) => judgeAll(rt, recs)));
    verdicts.forEach((v, i) => {
      expect(v.termination_reason).toBe('skipped_unanimous');
      expect(v.usage.every((u) => u.phase === 'phase1')).toBe(true);
      expect(v.defects.flatMap((d) => d.statement_refs)).toEqual(recs[i]!.gold!.error_steps);
      expect(v.defects.every((d) => d.vote_count === 3)).toBe(true);
    });
  });

  it('otherwise deliberates only on the contested findings; the settled ones go straight to the verdict', async () => {
    // Traces with a clean step before the first error, which the noisy juror always flags.
    const recs = records(12, 71, 0).filter((r) => r.gold!.first_error_step! > 1).slice(0, 6);
    const audit = audited();
    const noisy = { 'sim-juror-c': { false_positive_rate: 1, fp_severity_mix: { minor: 1 } } };
    const verdicts = await withSim(profileWith(identical, noisy), recs, (sim) => withRuntime(deliberationJury(sim.url, adaptive), (rt) => judgeAll(rt, recs), audit));
    const turns = readAudit(audit).filter((l) => l.phase === 'juror_turn');
    verdicts.forEach((v, i) => {
      const gold = recs[i]!.gold!.error_steps ?? [];
      expect(gold.length).toBeGreaterThan(0);
      expect(['no_new_arguments', 'universal_agreement', 'cycling', 'turn_cap']).toContain(v.termination_reason);
      // Every gold step was settled (all three, same severity) and is in the verdict with three votes.
      for (const s of gold) expect(v.defects.find((d) => d.statement_refs.includes(s))?.vote_count).toBe(3);
      for (const l of turns.filter((x) => x.record_id === v.record_id)) {
        const user = l.messages[1]!.content;
        expect(user).toContain(`<<<BEGIN ${DELIB_BLOCK.settled}`);
        // The opening statements under discussion cite only the contested (non-gold) steps.
        const openings = [...user.matchAll(/<<<BEGIN OPENING STATEMENT [0-9a-f]{12}>>>\n([\s\S]*?)\n<<<END OPENING STATEMENT/g)].map((m) => m[1]!).join('\n');
        for (const m of openings.matchAll(/"STEP-(\d+)"/g)) expect(gold).not.toContain(Number(m[1]));
      }
    });
    expect(turns.length).toBeGreaterThan(0);
  });
});
