import type { DeliberationConfig, ParticipantConfig } from '../../../schemas/config.js';
import type { CallUsage } from '../../../schemas/usage.js';
import type { TerminationReason, TranscriptTurn } from '../../../schemas/verdict.js';
import { ModelCallError, type ModelGateway } from '../../llm/types.js';
import type { PromptSet } from '../../prompts/templates.js';
import { detectEnding } from './detect.js';
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
}

type Outcome<T> = { ok: true; value: T; usage: CallUsage } | { ok: false; error: string; usage: CallUsage | null };

async function attempt<T>(run: () => Promise<{ value: T; usage: CallUsage }>): Promise<Outcome<T>> {
  try {
    const r = await run();
    return { ok: true, value: r.value, usage: r.usage };
  } catch (err) {
    return { ok: false, error: (err as Error).message, usage: err instanceof ModelCallError ? err.usage : null };
  }
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
  const s = a.settings;
  const book = new RoundBook(a.jurors.map((j) => j.id));
  const seatOf = new Map(a.jurors.map((j) => [j.id, j]));
  const transcript: TranscriptTurn[] = [];
  const usage: CallUsage[] = [];
  const notes: string[] = [];
  const failStreak = new Map<string, number>();
  const skipped: string[] = [];
  const journal = new Journal(a.turn.turns);
  let termination: TerminationReason | null = null;
  let endedBy: LoopResult['endedBy'] = 'limit';
  let moderatorCalls = 0;
  let moderatorFailures = 0;
  let moderatorStreak = 0;
  let moderatorError = '';
  let speakerOverrides = 0;
  const fallback = a.prompts.templates['moderator.fallback'].trim();

  for (;;) {
    if (book.active().length < 2) {
      termination = 'error';
      notes.push(`deliberation stopped with ${book.active().length} juror(s) left`);
      break;
    }
    if (book.turns >= s.max_turns || (a.maxRounds !== undefined && book.roundsCompleted >= a.maxRounds)) {
      termination = 'turn_cap';
      break;
    }

    let decision: ModeratorDecision | null = null;
    if (moderatorStreak < s.max_consecutive_failures) {
      const view = journal.moderatorView(s.recent_window);
      moderatorCalls++;
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
      if (r.usage) usage.push(r.usage);
      if (r.ok) {
        decision = r.value;
        journal.addState(r.value.consensus_state, moderatorCalls);
        moderatorStreak = 0;
      } else {
        moderatorFailures++;
        moderatorStreak++;
        moderatorError = r.error;
      }
    }

    if (decision?.should_terminate && book.roundsCompleted >= 1) {
      termination = decision.termination_reason ?? 'no_new_arguments';
      endedBy = 'moderator';
      break;
    }
    if (book.turnsInRound === 0 && book.roundsCompleted >= 1) {
      const lastRound = book.round - 1;
      const ending = detectEnding(
        transcript.filter((t) => t.round === lastRound),
        transcript.filter((t) => t.round < lastRound),
        book.active(),
        s.cycle_similarity,
      );
      if (ending) {
        termination = ending;
        endedBy = 'detector';
        break;
      }
    }

    const pick = decision ? book.resolve(decision.next_speaker) : { id: book.roundRobin(), overridden: false };
    if (decision && pick.overridden) speakerOverrides++;
    const ownInstruction = decision && !pick.overridden ? (decision.instruction ?? '').trim() : '';
    const instruction = ownInstruction || fallback;
    const speaker = seatOf.get(pick.id)!;
    const { turn, round } = { turn: book.turns + 1, round: book.round };
    const r = await attempt(async () => {
      const res = await a.gateway.text({
        ctx: { record_id: a.recordId, phase: 'juror_turn', participant: speaker.id, caller: 'jury.deliberation.turn', sample_index: turn },
        seat: speaker,
        messages: jurorTurnMessages(a.turn, transcript, speaker.id, instruction),
      });
      return { value: res.value, usage: res.usage };
    });
    if (r.usage) usage.push(r.usage);
    book.give(speaker.id);
    const message = r.ok ? r.value.trim() : '';
    if (message) {
      const spoken = { turn, round, speaker: speaker.id, instruction, message };
      transcript.push(spoken);
      journal.addTurn(spoken);
      failStreak.set(speaker.id, 0);
    } else {
      // An empty reply (e.g. a reasoning model that spent its budget thinking) is no contribution.
      skipped.push(`${speaker.id} at turn ${turn} (${r.ok ? 'empty reply' : r.error})`);
      const n = (failStreak.get(speaker.id) ?? 0) + 1;
      failStreak.set(speaker.id, n);
      if (n >= s.max_consecutive_failures) book.remove(speaker.id);
    }
  }

  if (moderatorFailures > 0) {
    const stopped = moderatorStreak >= s.max_consecutive_failures ? `; not asked again after ${s.max_consecutive_failures} failures in a row` : '';
    notes.push(`moderator failed ${moderatorFailures} of ${moderatorCalls} decisions (${moderatorError}); round-robin order used instead${stopped}`);
  }
  if (skipped.length > 0) notes.push(`juror turns skipped: ${skipped.join('; ')}`);
  const removed = book.removed();
  if (removed.length > 0) notes.push(`removed after ${s.max_consecutive_failures} failed turns in a row: ${removed.join(', ')}`);
  return {
    transcript,
    journal,
    termination: termination ?? 'turn_cap',
    rounds: book.roundsCompleted + (book.turnsInRound > 0 ? 1 : 0),
    removed,
    notes,
    usage,
    endedBy,
    moderatorCalls,
    moderatorFailures,
    speakerOverrides,
  };
}
