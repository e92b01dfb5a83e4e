import { BLOCK } from '../prompts/build.js';
import { DELIB_BLOCK } from '../prompts/deliberation-wire.js';
import { type Ledger, type Item, replay } from './deliberation-ledger.js';
import { jurorTurnTask, promptRng, type DelibTaskInput, type DelibTaskOutput } from './deliberation-juror.js';
import { blocksOf, parseActs, parseFindings, parseTurns, promptText, statusList, statusValue, SUBSTANTIVE, type Finding, type SimTurn } from './deliberation-parse.js';
import { renderJson } from './text.js';

/**
 * The simulated moderator (App. C.2) and its final extraction call (§2.2.2). Both are blind:
 * they read only the opening statements (the Phase 1 judgements), the turns and their own state. A failure
 * is a reply no JSON repair can fix, so the gateway's re-ask draws again (a fresh prompt).
 */

function parseState(prompt: string): Array<Record<string, unknown>> {
  const block = blocksOf(prompt, DELIB_BLOCK.state).pop();
  try {
    const map = (JSON.parse(block?.content ?? '{}') as { consensus_map?: unknown }).consensus_map;
    return Array.isArray(map) ? (map as Array<Record<string, unknown>>) : [];
  } catch {
    return [];
  }
}

const stepNo = (r: unknown) => Number(/(\d+)/.exec(String(r))?.[1] ?? NaN);
const ids = (v: unknown) => (Array.isArray(v) ? v.map(String) : []);

/** Turns older than the window are known only through the journal's base state (the state before the first turn shown): start from it. */
function seedFromState(l: Ledger, state: Array<Record<string, unknown>>): void {
  for (const s of state) {
    const refs = (Array.isArray(s.statement_refs) ? s.statement_refs : []).map(stepNo).filter((n) => Number.isInteger(n));
    const it = refs.length ? l.itemOf(refs[0]!) : undefined;
    if (!it) continue;
    it.supporters = new Set(ids(s.source_ref));
    it.contesters = new Set(ids(s.contested_by));
    if (it.contesters.size > 0) it.everContested = true;
  }
}

function consensusMap(l: Ledger): Array<Record<string, unknown>> {
  return l.items.map((it, i) => ({
    consensus_id: `C${i + 1}`,
    what_went_wrong: it.best.wording,
    source_ref: [...it.supporters].sort(),
    best_source: it.best.juror,
    statement_refs: it.steps.map((s) => `STEP-${s}`),
    judge_count: it.supporters.size,
    impact: it.best.impact,
    evidence: it.best.evidence,
    ...(it.best.correct_value ? { correct_value: it.best.correct_value } : {}),
    contested_by: [...it.contesters].sort(),
  }));
}

function ending(l: Ledger, turns: readonly SimTurn[], round: number, panel: readonly string[]): string | null {
  const last = turns.filter((t) => t.round === round);
  // A round in which some panelist's turn failed has not heard everyone yet.
  if (!panel.every((j) => last.some((t) => t.speaker === j))) return null;
  const lastOf = new Map(last.map((t) => [t.speaker, t.message]));
  if (panel.every((j) => lastOf.has(j) && parseActs(lastOf.get(j)!)[0]?.kind === 'agree_all')) return 'universal_agreement';
  if (last.every((t) => parseActs(t.message).every((a) => !SUBSTANTIVE.has(a.kind)))) return 'no_new_arguments';
  if (last.every((t) => turns.some((e) => e.turn < t.turn && e.speaker === t.speaker && e.message === t.message))) return 'cycling';
  // Positions have converged: everyone has taken a side on every finding and no dispute is open.
  if (l.items.every((it) => panel.every((j) => l.weighed(j, it)) && !l.open(it))) return 'universal_agreement';
  return null;
}

function instructionFor(l: Ledger, j: string): string {
  const owed = l.items.filter((it) => l.owes(j, it)).slice(0, 2);
  const unweighed = l.items.filter((it) => !l.weighed(j, it)).slice(0, 2);
  const parts: string[] = [];
  for (const it of owed) parts.push(`${[...it.contesters].sort().join(' and ')} dispute${it.contesters.size === 1 ? 's' : ''} your finding on [STEP-${it.key}]: defend it with evidence from the step, or concede it.`);
  for (const it of unweighed) parts.push(`State whether you endorse or dispute the finding on [STEP-${it.key}] raised by ${[...it.raisedBy].sort().join(' and ')}, quoting the step.`);
  return `${j}: ${parts.length ? parts.join(' ') : 'say whether anything said so far changes your view; if nothing does, say so.'}`;
}

export const moderatorTask = {
  name: 'moderator',
  detect: (b: ReadonlyMap<string, string>) => b.has(DELIB_BLOCK.state) && b.has(DELIB_BLOCK.opening) && !b.has(BLOCK.trace) && !b.has(DELIB_BLOCK.outcome),
  run({ request, model, rng: base }: DelibTaskInput): DelibTaskOutput {
    const b = model.deliberation;
    const prompt = promptText(request.messages);
    const rng = promptRng('moderator', base, prompt);
    const panel = statusList(prompt, 'All panelists');
    const notHeard = statusList(prompt, 'Not yet heard in this round');
    const heard = statusList(prompt, 'Heard in this round');
    const round = Number(statusValue(prompt, 'Current logical round') ?? 1);
    const completed = Number(statusValue(prompt, 'Rounds completed') ?? 0);
    const totalTurns = Number(statusValue(prompt, 'Turns so far')?.split(' ')[0] ?? 0);
    const turns = parseTurns(prompt);
    const findings: Finding[] = parseFindings(blocksOf(prompt, DELIB_BLOCK.opening).map((x) => x.content)).findings;
    const hidden = Number(statusValue(prompt, 'Earlier turns not shown above') ?? 0);
    const ledger = replay(findings, []);
    if (hidden > 0) seedFromState(ledger, parseState(prompt));
    for (const t of turns) ledger.apply(t);
    const state = { consensus_map: consensusMap(ledger) };
    const open = ledger.items.filter((it) => ledger.open(it));
    const reasoning = `${turns.length} turns visible; open disputes: ${open.length ? open.map((it) => `[STEP-${it.key}] (${[...it.supporters].sort().join(', ')} vs ${[...it.contesters].sort().join(', ')})`).join('; ') : 'none'}.`;

    if (rng.chance(b.moderator_fail_rate)) {
      return { kind: 'text', text: renderJson(rng, { should_terminate: false, consensus_state: state }, 'malformed_broken'), notes: ['Lost track of the format.'] };
    }
    const end = b.terminate && heard.length === 0 && completed >= 1 ? ending(ledger, turns, round - 1, panel) : null;
    if (end) return { kind: 'json', value: { should_terminate: true, termination_reason: end, next_speaker: null, instruction: null, reasoning, consensus_state: state }, notes: [`Time to stop: ${end}.`] };

    const pool = notHeard.length > 0 ? notHeard : panel;
    const lastTurn = (j: string) => Math.max(0, ...turns.filter((t) => t.speaker === j).map((t) => t.turn));
    const score = (j: string): number[] => [ledger.items.some((it) => ledger.owes(j, it)) ? 0 : 1, ledger.items.some((it) => !ledger.weighed(j, it)) ? 0 : 1, lastTurn(j) - totalTurns];
    const next = pool.reduce((best, j) => {
      const [x, y] = [score(j), score(best)];
      for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i]! < y[i]! ? j : best;
      return best;
    }, pool[0] ?? '');
    const speaker = rng.chance(b.invalid_speaker_rate) ? 'jury-unknown' : next;
    return { kind: 'json', value: { should_terminate: false, termination_reason: null, next_speaker: speaker, instruction: instructionFor(ledger, next), reasoning, consensus_state: state }, notes: [`${next} should speak next.`] };
  },
};

function view(it: Item, n: number): string {
  const who = [...it.supporters].sort().join(', ');
  return `${who} (${it.best.impact}, ${it.steps.map((s) => `STEP-${s}`).join(', ')}; ${it.supporters.size} of ${n}, disputed by ${[...it.contesters].sort().join(', ') || 'nobody'}): ${it.best.wording}`;
}

export const extractionTask = {
  name: 'extraction',
  detect: (b: ReadonlyMap<string, string>) => b.has(DELIB_BLOCK.outcome) && b.has(DELIB_BLOCK.state) && !b.has(BLOCK.trace),
  run({ request, model, rng: base }: DelibTaskInput): DelibTaskOutput {
    const b = model.deliberation;
    const prompt = promptText(request.messages);
    const rng = promptRng('extraction', base, prompt);
    const outcome = blocksOf(prompt, DELIB_BLOCK.outcome).pop()?.content ?? '';
    const { findings } = parseFindings(blocksOf(prompt, DELIB_BLOCK.opening).map((x) => x.content));
    const jurors = (/\((.*)\)$/m.exec(statusValue(outcome, 'Panelists who completed their independent audit') ?? '')?.[1] ?? '').split(', ').filter(Boolean);
    const n = jurors.length;
    const need = Number(/Majority needed for consensus: (\d+)/.exec(outcome)?.[1] ?? Math.floor(n / 2) + 1);
    const ledger = replay(findings, parseTurns(prompt));
    const consensus: Array<Record<string, unknown>> = [];
    const dissenting: string[] = [];
    let share = 0;
    for (const it of ledger.items) {
      const voters = [...it.supporters].filter((j) => jurors.includes(j)).sort();
      share += n > 0 ? Math.max(voters.length, it.contesters.size + it.conceded.size) / n : 0;
      const basis = voters.length >= need ? 'majority' : voters.length > 0 && !it.everContested ? 'uncontested' : null;
      if (basis) {
        consensus.push({
          statement_refs: it.steps.map((s) => `STEP-${s}`),
          what_went_wrong: it.best.wording,
          impact: it.best.impact,
          evidence: it.best.evidence,
          ...(it.best.correct_value ? { correct_value: it.best.correct_value } : {}),
          vote_count: voters.length,
          voters,
          basis,
        });
      } else if (voters.length > 0) dissenting.push(view(it, n));
    }
    const value = {
      consensus_defects: consensus,
      confidence: ledger.items.length ? Math.round((share / ledger.items.length) * 1000) / 1000 : 1,
      dissenting_views: dissenting,
      termination_reason: statusValue(outcome, 'Termination reason'),
      rounds: Number(statusValue(outcome, 'Logical rounds') ?? 0),
    };
    if (rng.chance(b.extraction_fail_rate)) return { kind: 'text', text: renderJson(rng, value, 'malformed_broken'), notes: ['Lost track of the format.'] };
    return { kind: 'json', value, notes: [`${consensus.length} findings reached consensus.`] };
  },
};

export const DELIBERATION_TASKS = [jurorTurnTask, moderatorTask, extractionTask] as const;
