import type { DeliberationConfig, ParticipantConfig } from '../../../schemas/config.js';
import type { CallUsage } from '../../../schemas/usage.js';
import type { ClaimCheck, TerminationReason, TranscriptTurn } from '../../../schemas/verdict.js';
import { isEndpointOutage } from '../../llm/outage.js';
import { ModelCallError, type ModelGateway } from '../../llm/types.js';
import type { PromptSet } from '../../prompts/templates.js';
import { detectEnding } from './detect.js';
import type { ClaimChecker } from './grounding.js';
import { Journal } from './journal.js';
import { jurorTurnMessages, moderatorMessages, type TurnContext } from './prompts.js';
import { RoundBook } from './rounds.js';
import { ModeratorDecision } from './schemas.js';

export interface LoopArgs {
  gateway: ModelGateway;
  recordId: string;
  prompts: PromptSet;
  settings: DeliberationConfig;
  /** adaptive mode's round budget (ends as turn_cap, like max_turns) */
  maxRounds?: number | undefined;
  moderator: ParticipantConfig;
  /** the jurors that succeeded in Phase 1, in configured order, seeded */
  jurors: readonly ParticipantConfig[];
  turn: TurnContext;
  /** checks each turn's new claims before the moderator reads it (./grounding.ts); absent: off */
  checker?: ClaimChecker | undefined;
}

export interface LoopResult {
  transcript: TranscriptTurn[];
  /** turns and state changes in order (`journal.state` is the last state): the extraction reads all of it */
  journal: Journal;
  termination: TerminationReason;
  rounds: number;
  removed: string[];
  /** why the deliberation is degraded (skipped turns, moderator fallback), empty when clean */
  notes: string[];
  usage: CallUsage[];
  /** how the loop ended: the moderator called it, a backstop check did, or a limit did */
  endedBy: 'moderator' | 'detector' | 'limit';
  moderatorCalls: number;
  moderatorFailures: number;
  speakerOverrides: number;
  /** what the grounding checker found of each new claim (empty when it is off) */
  claimChecks: ClaimCheck[];
}

type Outcome<T> = { ok: true; value: T; usage: CallUsage } | { ok: false; error: string; usage: CallUsage | null };

async function attempt<T>(run: () => Promise<{ value: T; usage: CallUsage }>): Promise<Outcome<T>> {
  try {
    const r = await run();
    return { ok: true, value: r.value, usage: r.usage };
  } catch (err) {
    if (isEndpointOutage(err)) throw err;
    return { ok: false, error: (err as Error).message, usage: err instanceof ModelCallError ? err.usage : null };
  }
}

/** What one record's deliberation keeps between turns. */
interface LoopState {
  book: RoundBook;
  seatOf: Map<string, ParticipantConfig>;
  transcript: TranscriptTurn[];
  usage: CallUsage[];
  notes: string[];
  failStreak: Map<string, number>;
  skipped: string[];
  journal: Journal;
  moderatorCalls: number;
  moderatorFailures: number;
  moderatorStreak: number;
  moderatorError: string;
  speakerOverrides: number;
  /** the instruction used when the moderator gives none (or its pick was overridden) */
  fallback: string;
  claimChecks: ClaimCheck[];
}

type Ending = { termination: TerminationReason; endedBy: LoopResult['endedBy'] };

function startState(a: LoopArgs): LoopState {
  return {
    book: new RoundBook(a.jurors.map((j) => j.id)),
    seatOf: new Map(a.jurors.map((j) => [j.id, j])),
    transcript: [],
    usage: [],
    notes: [],
    failStreak: new Map(),
    skipped: [],
    journal: new Journal(a.turn.turns),
    moderatorCalls: 0,
    moderatorFailures: 0,
    moderatorStreak: 0,
    moderatorError: '',
    speakerOverrides: 0,
    fallback: a.prompts.templates['moderator.fallback'].trim(),
    claimChecks: [],
  };
}

/** Too few jurors left, or the turn / round budget spent. */
function limitReached(a: LoopArgs, st: LoopState): Ending | null {
  const { book } = st;
  if (book.active().length < 2) {
    st.notes.push(`deliberation stopped with ${book.active().length} juror(s) left`);
    return { termination: 'error', endedBy: 'limit' };
  }
  if (book.turns >= a.settings.max_turns || (a.maxRounds !== undefined && book.roundsCompleted >= a.maxRounds)) {
    return { termination: 'turn_cap', endedBy: 'limit' };
  }
  return null;
}

/** One moderator decision, or null when it failed or is no longer asked (round-robin then). */
async function askModerator(a: LoopArgs, st: LoopState): Promise<ModeratorDecision | null> {
  const { book, journal } = st;
  const s = a.settings;
  if (st.moderatorStreak >= s.max_consecutive_failures) return null;
  const view = journal.moderatorView(s.recent_window);
  st.moderatorCalls++;
  const r = await attempt(async () => {
    const res = await a.gateway.structured({
      ctx: { record_id: a.recordId, phase: 'moderator', participant: a.moderator.id, caller: 'jury.deliberation.moderator', sample_index: book.turns },
      seat: a.moderator,
      messages: moderatorMessages(a.prompts, a.turn.openings, view.text, {
        totalTurns: book.turns,
        maxTurns: s.max_turns,
        round: book.round,
        roundsCompleted: book.roundsCompleted,
        heard: book.heard(),
        notHeard: book.notHeard(),
        panelists: book.active(),
        removed: book.removed(),
        hiddenTurns: view.hiddenTurns,
      }),
      schema: ModeratorDecision,
      schemaName: 'ModeratorDecision',
    });
    return { value: res.value, usage: res.usage };
  });
  if (r.usage) st.usage.push(r.usage);
  if (!r.ok) {
    st.moderatorFailures++;
    st.moderatorStreak++;
    st.moderatorError = r.error;
    return null;
  }
  journal.addState(r.value.consensus_state, st.moderatorCalls);
  st.moderatorStreak = 0;
  return r.value;
}

/** The moderator's call to end (accepted after a full round), else the backstop check at a round's end. */
function chosenEnding(a: LoopArgs, st: LoopState, decision: ModeratorDecision | null): Ending | null {
  const { book, transcript } = st;
  if (decision?.should_terminate && book.roundsCompleted >= 1) {
    return { termination: decision.termination_reason ?? 'no_new_arguments', endedBy: 'moderator' };
  }
  if (book.turnsInRound === 0 && book.roundsCompleted >= 1) {
    const lastRound = book.round - 1;
    const ending = detectEnding(
      transcript.filter((t) => t.round === lastRound),
      transcript.filter((t) => t.round < lastRound),
      book.active(),
      a.settings.cycle_similarity,
    );
    if (ending) return { termination: ending, endedBy: 'detector' };
  }
  return null;
}

/** The next speaker answers; an empty or failed turn is skipped and counts towards removal. */
async function jurorTurn(a: LoopArgs, st: LoopState, decision: ModeratorDecision | null): Promise<void> {
  const { book, transcript } = st;
  const pick = decision ? book.resolve(decision.next_speaker) : { id: book.roundRobin(), overridden: false };
  if (decision && pick.overridden) st.speakerOverrides++;
  const ownInstruction = decision && !pick.overridden ? (decision.instruction ?? '').trim() : '';
  const instruction = ownInstruction || st.fallback;
  const speaker = st.seatOf.get(pick.id)!;
  const { turn, round } = { turn: book.turns + 1, round: book.round };
  const r = await attempt(async () => {
    const res = await a.gateway.text({
      ctx: { record_id: a.recordId, phase: 'juror_turn', participant: speaker.id, caller: 'jury.deliberation.turn', sample_index: turn },
      seat: speaker,
      messages: jurorTurnMessages(a.turn, transcript, speaker.id, instruction),
    });
    return { value: res.value, usage: res.usage };
  });
  if (r.usage) st.usage.push(r.usage);
  book.give(speaker.id);
  const message = r.ok ? r.value.trim() : '';
  if (message) {
    const spoken = { turn, round, speaker: speaker.id, instruction, message };
    transcript.push(spoken);
    // The moderator (and the extraction) read the turn with its ungrounded new claims withheld.
    const reviewed = a.checker ? await a.checker.review(spoken) : null;
    if (reviewed) {
      st.usage.push(...reviewed.usage);
      st.claimChecks.push(...reviewed.checks);
    }
    st.journal.addTurn(reviewed && reviewed.message !== spoken.message ? { ...spoken, message: reviewed.message } : spoken);
    st.failStreak.set(speaker.id, 0);
    return;
  }
  // An empty reply (e.g. a reasoning model that spent its budget thinking) is no contribution.
  st.skipped.push(`${speaker.id} at turn ${turn} (${r.ok ? 'empty reply' : r.error})`);
  const n = (st.failStreak.get(speaker.id) ?? 0) + 1;
  st.failStreak.set(speaker.id, n);
  if (n >= a.settings.max_consecutive_failures) book.remove(speaker.id);
}

/** Why the deliberation is degraded: moderator fallbacks, skipped turns, removed jurors, claims the checker failed on. */
function degradedNotes(a: LoopArgs, st: LoopState): void {
  const s = a.settings;
  if (st.moderatorFailures > 0) {
    const stopped = st.moderatorStreak >= s.max_consecutive_failures ? `; not asked again after ${s.max_consecutive_failures} failures in a row` : '';
    st.notes.push(`moderator failed ${st.moderatorFailures} of ${st.moderatorCalls} decisions (${st.moderatorError}); round-robin order used instead${stopped}`);
  }
  if (st.skipped.length > 0) st.notes.push(`juror turns skipped: ${st.skipped.join('; ')}`);
  const removed = st.book.removed();
  if (removed.length > 0) st.notes.push(`removed after ${s.max_consecutive_failures} failed turns in a row: ${removed.join(', ')}`);
  const unchecked = st.claimChecks.filter((c) => c.result === 'accepted_on_failure');
  if (unchecked.length > 0) st.notes.push(`grounding checker failed on ${unchecked.length} claim(s) (${unchecked[0]!.error ?? 'no reply'}); accepted unchecked: ${unchecked.map((c) => `${c.speaker} at turn ${c.turn}`).join(', ')}`);
}

/**
 * The moderated deliberation (§2.2.2): each turn the moderator (blind to problem and trace)
 * folds the last contribution into its consensus state, checks for an ending and picks the
 * next speaker with an instruction; the juror then re-reads problem and trace and answers.
 *
 * Fault tolerance (App. F): a juror whose turn fails is skipped and, after
 * `max_consecutive_failures` failures in a row, removed; a failed moderator decision falls
 * back to round-robin order with a fixed instruction, and after as many failures in a row the
 * moderator is no longer asked for this record. Endings are only accepted once a full logical
 * round has been held; the loop's own checks back the moderator up at round ends, and
 * `max_turns` caps everything.
 */
export async function runLoop(a: LoopArgs): Promise<LoopResult> {
  const st = startState(a);
  let ending: Ending | null;
  for (;;) {
    ending = limitReached(a, st);
    if (ending) break;
    const decision = await askModerator(a, st);
    ending = chosenEnding(a, st, decision);
    if (ending) break;
    await jurorTurn(a, st, decision);
  }
  degradedNotes(a, st);
  const { book } = st;
  return {
    transcript: st.transcript,
    journal: st.journal,
    termination: ending.termination,
    rounds: book.roundsCompleted + (book.turnsInRound > 0 ? 1 : 0),
    removed: book.removed(),
    notes: st.notes,
    usage: st.usage,
    endedBy: ending.endedBy,
    moderatorCalls: st.moderatorCalls,
    moderatorFailures: st.moderatorFailures,
    speakerOverrides: st.speakerOverrides,
    claimChecks: st.claimChecks,
  };
}
