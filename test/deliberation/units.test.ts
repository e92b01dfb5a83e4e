import { describe, expect, it } from 'vitest';
import type { Defect } from '../../schemas/defect.js';
import type { Judgement, TranscriptTurn } from '../../schemas/verdict.js';
import { detectEnding, similarity } from '../../src/jury/deliberation/detect.js';
import { AGREE_ALL, NOTHING_NEW, saysAgreeAll, saysNothingNew } from '../../src/prompts/deliberation-wire.js';
import { RoundBook } from '../../src/jury/deliberation/rounds.js';
import { ExtractionOutput, ModeratorDecision, readEnding } from '../../src/jury/deliberation/schemas.js';
import { triage } from '../../src/jury/deliberation/triage.js';

describe('logical rounds', () => {
  it('a round closes once every active juror has had the floor, however many turns it took', () => {
    const b = new RoundBook(['a', 'b', 'c']);
    expect(b.give('a')).toEqual({ turn: 1, round: 1 });
    expect(b.give('b')).toEqual({ turn: 2, round: 1 });
    expect(b.give('a')).toEqual({ turn: 3, round: 1 }); // a second word for a: still round 1
    expect(b.notHeard()).toEqual(['c']);
    expect(b.give('c')).toEqual({ turn: 4, round: 1 });
    expect(b.roundsCompleted).toBe(1);
    expect(b.round).toBe(2);
    expect(b.heard()).toEqual([]);
    expect(b.silentFor('b')).toBe(2);
  });

  it('removing the only juror still owed the floor closes the round', () => {
    const b = new RoundBook(['a', 'b', 'c']);
    b.give('a');
    b.give('b');
    b.remove('c');
    expect(b.roundsCompleted).toBe(1);
    expect(b.active()).toEqual(['a', 'b']);
    expect(b.removed()).toEqual(['c']);
  });

  it('round-robin follows the configured order from the last speaker, skipping the heard and the removed', () => {
    const b = new RoundBook(['a', 'b', 'c', 'd']);
    expect(b.roundRobin()).toBe('a');
    b.give('c');
    expect(b.roundRobin()).toBe('d');
    b.remove('d');
    expect(b.roundRobin()).toBe('a');
    b.give('a');
    b.give('b'); // round closes (c, a, b heard; d removed)
    expect(b.roundsCompleted).toBe(1);
    expect(b.roundRobin()).toBe('c');
  });

  it("the moderator's pick is checked: unknown ids and a round that would never end are overridden", () => {
    const b = new RoundBook(['jury-0', 'jury-1', 'jury-2']);
    expect(b.resolve(' JURY-1 ')).toEqual({ id: 'jury-1', overridden: false });
    expect(b.resolve('jury-9')).toEqual({ id: 'jury-0', overridden: true });
    expect(b.resolve(null)).toEqual({ id: 'jury-0', overridden: true });
    b.give('jury-1');
    b.give('jury-0');
    expect(b.resolve('jury-1')).toEqual({ id: 'jury-1', overridden: false }); // a reply within the round is fine
    b.give('jury-1');
    // Three turns into a round of three jurors, jury-2 has still not spoken: it gets the floor.
    expect(b.resolve('jury-0')).toEqual({ id: 'jury-2', overridden: true });
  });
});

describe('fixed phrases and backstop endings', () => {
  it('recognises the phrases with a little courtesy around them, not inside an argument', () => {
    expect(saysNothingNew(NOTHING_NEW)).toBe(true);
    expect(saysNothingNew(`Thank you. "${NOTHING_NEW}"`)).toBe(true);
    expect(saysNothingNew(`${NOTHING_NEW} However, [STEP-4] divides by zero when x = 2, which every later step inherits, so I now dispute jury-1's claim that it is sound.`)).toBe(false);
    expect(saysAgreeAll(AGREE_ALL.toUpperCase())).toBe(true);
    expect(saysAgreeAll(NOTHING_NEW)).toBe(false);
  });

  const t = (turn: number, round: number, speaker: string, message: string): TranscriptTurn => ({ turn, round, speaker, message });
  const argue = 'I disagree with jury-1 on [STEP-4]: the step multiplies 12 by 3 to get 36, which is right, and the total of 48 follows.';

  it('agreement, nothing new and cycling, in that order of precedence; otherwise no ending', () => {
    const active = ['a', 'b'];
    expect(detectEnding([t(3, 2, 'a', AGREE_ALL), t(4, 2, 'b', AGREE_ALL)], [], active, 0.85)).toBe('universal_agreement');
    expect(detectEnding([t(3, 2, 'a', AGREE_ALL), t(4, 2, 'b', NOTHING_NEW)], [], active, 0.85)).toBe('no_new_arguments');
    const before = [t(1, 1, 'a', argue), t(2, 1, 'b', 'I maintain my finding on [STEP-4]: 12 times 3 is 36 but the problem says 12 per box and 4 boxes.')];
    expect(detectEnding([t(3, 2, 'a', argue + ' '), t(4, 2, 'b', NOTHING_NEW)], before, active, 0.85)).toBe('cycling');
    expect(detectEnding([t(3, 2, 'a', argue), t(4, 2, 'b', 'New defect on [STEP-7] (major): the remainder 5 is dropped.')], before, active, 0.85)).toBeNull();
    expect(detectEnding([], before, active, 0.85)).toBeNull();
    // A juror whose turn failed this round has not assented to anything.
    expect(detectEnding([t(3, 2, 'a', NOTHING_NEW), t(4, 2, 'b', NOTHING_NEW)], before, ['a', 'b', 'c'], 0.85)).toBeNull();
    // One juror's repeat is not a cycle when another juror is still saying new things.
    expect(detectEnding([t(3, 2, 'a', argue), t(4, 2, 'b', 'I concede [STEP-4]: 4 boxes are mentioned only later, so 36 is right here.')], before, active, 0.85)).toBeNull();
  });

  it('similarity is word-trigram overlap', () => {
    expect(similarity(argue, argue)).toBe(1);
    expect(similarity(argue, 'Completely different words about another step entirely here.')).toBe(0);
    expect(similarity(argue, argue.replace('48', '50'))).toBeGreaterThan(0.8);
  });
});

describe('triage for adaptive phase 2', () => {
  const d = (refs: number[], impact: Defect['impact'] = 'major', what = `wrong at ${refs}`): Defect => ({ statement_refs: refs, what_went_wrong: what, impact, evidence: 'e' });
  const j = (id: string, defects: Defect[], ok = true): Judgement => ({ juror_id: id, model: 'm', ok, defects, dropped_refs: 0 });

  it('empty when every successful juror found nothing (failed jurors do not count)', () => {
    expect(triage([j('a', []), j('b', []), j('c', [d([2])], false)]).path).toBe('empty');
  });

  it('unanimous when all cite the same steps with the same severities; the most detailed wording stands', () => {
    const r = triage([j('a', [d([2]), d([5, 6], 'fatal')]), j('b', [d([2], 'major', 'a much longer description of step 2'), d([5, 6], 'fatal')]), j('c', [d([2]), d([5], 'fatal'), d([6], 'fatal')])]);
    expect(r.path).toBe('unanimous');
    expect(r.settled.map((s) => [s.statement_refs, s.impact, s.vote_count, s.voters])).toEqual([
      [[2], 'major', 3, ['a', 'b', 'c']],
      [[5, 6], 'fatal', 3, ['a', 'b', 'c']],
    ]);
    expect(r.settled[0]!.what_went_wrong).toBe('a much longer description of step 2');
  });

  it('contested groups (other severity, other steps, a juror missing) stay in discussion; settled ones do not', () => {
    const r = triage([j('a', [d([2]), d([4]), d([8])]), j('b', [d([2]), d([4], 'minor'), d([8, 9])]), j('c', [d([2]), d([4])])]);
    expect(r.path).toBe('contested');
    expect(r.settled.map((s) => s.statement_refs)).toEqual([[2]]);
    expect(r.contestedGroups).toBe(2);
    expect(r.contested.map((p) => [p.juror_id, p.defects.map((x) => x.statement_refs)])).toEqual([
      ['a', [[4], [8]]],
      ['b', [[4], [8, 9]]],
      ['c', [[4]]],
    ]);
  });
});

describe('adaptive knobs', () => {
  const d = (refs: number[], impact: Defect['impact']): Defect => ({ statement_refs: refs, what_went_wrong: `wrong at ${refs}`, impact, evidence: 'e' });
  const j = (id: string, defects: Defect[]): Judgement => ({ juror_id: id, model: 'm', ok: true, defects, dropped_refs: 0 });

  it('same_severity: false settles findings on the same steps whatever their severities, keeping the highest', () => {
    const js = [j('a', [d([3], 'minor')]), j('b', [d([3], 'fatal')]), j('c', [d([3], 'major')])];
    expect(triage(js).path).toBe('contested');
    const loose = triage(js, false);
    expect(loose.path).toBe('unanimous');
    expect(loose.settled.map((s) => [s.statement_refs, s.impact])).toEqual([[[3], 'fatal']]);
  });
});

describe('lenient moderator and extraction replies', () => {
  it('reads prose termination reasons, string booleans and a missing state', () => {
    expect(readEnding('Universal agreement reached')).toBe('universal_agreement');
    expect(readEnding('arguments are cycling')).toBe('cycling');
    expect(readEnding('no new arguments in a full round')).toBe('no_new_arguments');
    expect(readEnding(null)).toBeNull();
    const m = ModeratorDecision.parse({ should_terminate: 'true', termination_reason: 'consensus', next_speaker: null, consensus_state: null });
    expect(m).toMatchObject({ should_terminate: true, termination_reason: 'universal_agreement', consensus_state: { consensus_map: [] } });
    const item = ModeratorDecision.parse({ should_terminate: false, termination_reason: null, consensus_state: { consensus_map: [{ consensus_id: 1, what_went_wrong: 'x', source_ref: 'jury-0', statement_refs: 'STEP-2', impact: 'MAJOR', evidence: null }] } });
    expect(item.consensus_state.consensus_map[0]).toMatchObject({ consensus_id: 'C1', source_ref: ['jury-0'], statement_refs: ['STEP-2'], impact: 'major', evidence: '' });
    expect(ModeratorDecision.safeParse({ should_terminate: false, consensus_state: { consensus_map: [{ what_went_wrong: 'x', impact: 'severe' }] } }).success).toBe(false);
  });

  it('reads a percentage confidence and object-shaped dissent', () => {
    const x = ExtractionOutput.parse({ consensus_defects: [], confidence: '80%', dissenting_views: [{ juror: 'jury-1', view: 'STEP-3' }] });
    expect(x.confidence).toBeCloseTo(0.8);
    expect(x.dissenting_views[0]).toContain('jury-1');
    expect(ExtractionOutput.safeParse({ consensus_defects: [], confidence: 140 }).success).toBe(false);
  });
});
