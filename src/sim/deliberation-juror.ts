import { createHash } from 'node:crypto';
import type { Impact } from '../../schemas/defect.js';
import type { ChatRequest } from '../llm/types.js';
import { BLOCK } from '../prompts/build.js';
import { AGREE_ALL, DELIB_BLOCK, NOTHING_NEW } from '../prompts/deliberation-wire.js';
import type { GoldEntry } from './gold.js';
import { Ledger, replay, type Item } from './deliberation-ledger.js';
import { blocksOf, parseFindings, parseTurns, promptText, renderAct } from './deliberation-parse.js';
import { createRng, weighted, type Rng } from '../util/prng.js';
import type { ModelProfile } from './profile.js';
import { describeDefect, describeInvented, quoteFragment } from './text.js';

/**
 * The simulated deliberating juror (App. C.3). It knows the gold error steps of the trace it
 * re-reads, so its stances follow the truth with the probabilities of its profile: it weighs in
 * on findings it has not yet taken a side on, answers disputes of its own findings (defend or
 * concede), sometimes raises a missed defect, and otherwise says one of the two fixed phrases.
 * Matches SimTask (src/sim/tasks.ts) structurally; tasks.ts registers it, so no import back.
 */

export interface DelibTaskInput {
  request: ChatRequest;
  model: ModelProfile;
  steps: readonly string[];
  gold: GoldEntry | null;
  rng: Rng;
}
export type DelibTaskOutput = { kind: 'json'; value: Record<string, unknown>; notes: string[] } | { kind: 'text'; text: string; notes: string[] };

export function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** A stream of this exact prompt: two turns with the same first blocks must not draw alike. */
export function promptRng(task: string, base: Rng, prompt: string): Rng {
  return createRng([task, base.next(), digest(prompt)]);
}

const HOLDS = [
  'Nothing in the problem statement contradicts this step.',
  'The step only restates a quantity fixed earlier in the trace.',
  'The computation checks out when redone with the numbers given.',
  'Later steps use this value correctly.',
  'The claim is a standard identity and is applied within its conditions.',
];

function pad(rng: Rng, text: string, words: number): string {
  let out = text;
  while (out.split(/\s+/).length < words) out += ` ${rng.pick(HOLDS)}`;
  return out;
}

function jurorId(prompt: string): string {
  const all = [...prompt.matchAll(/\nYou are ([^\n]+?)\. Your own opening statement/g)];
  return all.length ? all[all.length - 1]![1]! : '';
}

export const jurorTurnTask = {
  name: 'juror_turn',
  detect: (b: ReadonlyMap<string, string>) => b.has(BLOCK.trace) && b.has(DELIB_BLOCK.instruction),
  run({ request, model, steps, gold, rng: base }: DelibTaskInput): DelibTaskOutput {
    const b = model.deliberation;
    const prompt = promptText(request.messages);
    const rng = promptRng('juror_turn', base, prompt);
    if (rng.chance(b.turn_fail_rate)) return { kind: 'text', text: '', notes: ['I ran out of budget before answering.'] };
    const me = jurorId(prompt);
    const turns = parseTurns(prompt);
    const mine = turns.filter((t) => t.speaker === me);
    if (mine.length > 0 && rng.chance(b.repeat_rate)) return { kind: 'text', text: mine[mine.length - 1]!.message, notes: ['Same position as before.'] };
    const ledger: Ledger = replay(parseFindings(blocksOf(prompt, DELIB_BLOCK.opening).map((x) => x.content)).findings, turns);
    const instruction = blocksOf(prompt, DELIB_BLOCK.instruction).pop()?.content ?? '';
    const named = new Set([...instruction.matchAll(/\[STEP-(\d+)\]/g)].map((m) => Number(m[1])));
    const errors = new Set(gold?.error_steps ?? []);
    const isTrue = (it: Item) => it.steps.some((s) => errors.has(s));
    const quote = (it: Item) => quoteFragment(rng, steps[it.key - 1] ?? '');
    const argue = (it: Item) => describeDefect(rng, steps, it.steps.slice(0, 2), it.best.impact, b.words_per_point).what_went_wrong;

    const asked = (it: Item) => (it.steps.some((s) => named.has(s)) ? 0 : 1);
    const pending = ledger.items
      .filter((it) => ledger.owes(me, it) || !ledger.weighed(me, it))
      .sort((x, y) => asked(x) - asked(y) || x.key - y.key)
      .slice(0, b.points_per_turn);
    const lines: string[] = [];
    const notes: string[] = [];
    for (const it of pending) {
      const truth = isTrue(it);
      const others = [...it.supporters].filter((j) => j !== me).sort();
      if (ledger.owes(me, it)) {
        if (rng.chance(truth ? b.concede_true : b.concede_false)) lines.push(renderAct({ kind: 'concede', step: it.key }, pad(rng, `on re-reading '${quote(it)}', the step holds and my finding does not stand.`, b.words_per_point)));
        else lines.push(renderAct({ kind: 'maintain', step: it.key }, argue(it)));
      } else if (rng.chance(truth ? b.endorse_true : b.endorse_false)) lines.push(renderAct({ kind: 'endorse', step: it.key, who: others }, argue(it)));
      else lines.push(renderAct({ kind: 'contest', step: it.key, who: others }, pad(rng, `the step is sound: '${quote(it)}' follows from what came before.`, b.words_per_point)));
      notes.push(`[STEP-${it.key}] is ${truth ? 'wrong' : 'fine'} as far as I can tell.`);
    }
    const cited = new Set(ledger.items.flatMap((it) => it.steps));
    for (const raise of raisedClaims(rng, model, steps, errors, cited)) (lines.push(raise.line), notes.push(raise.note));
    if (lines.length === 0) {
      const disputed = ledger.items.filter((it) => it.supporters.has(me) && it.contesters.size > 0);
      if (disputed.length > 0 && rng.chance(b.restate_rate)) lines.push(renderAct({ kind: 'maintain', step: rng.pick(disputed).key }, argue(rng.pick(disputed))));
      else if (!ledger.items.some((it) => ledger.open(it)) && rng.chance(b.agree_all_rate)) lines.push(AGREE_ALL);
      else lines.push(NOTHING_NEW);
    }
    return { kind: 'text', text: lines.join('\n\n'), notes };
  },
};

/**
 * New claims of a turn: sometimes a missed gold error (quoting its step), and, for a juror that
 * invents (`invent_rate`), at that rate an invented flaw on a clean step nobody cited, quoting
 * words the trace lacks: what deliberation's grounding checker is there to catch. The second
 * draw happens only when `invent_rate` > 0, so other profiles keep their streams.
 */
function raisedClaims(rng: Rng, model: ModelProfile, steps: readonly string[], errors: ReadonlySet<number>, cited: ReadonlySet<number>): Array<{ line: string; note: string }> {
  const b = model.deliberation;
  const out: Array<{ line: string; note: string }> = [];
  const raise = (s: number, wording: (impact: Impact) => string, note: string) => {
    const impact: Impact = weighted(rng, model.severity_mix);
    out.push({ line: renderAct({ kind: 'raise', step: s, impact, wording: wording(impact) }, ''), note });
  };
  if (rng.chance(b.new_defect_rate)) {
    const fresh = [...errors].filter((s) => !cited.has(s) && s <= steps.length).sort((x, y) => x - y);
    if (fresh.length > 0) {
      const s = rng.pick(fresh);
      raise(s, (impact) => describeDefect(rng, steps, [s], impact, b.words_per_point).what_went_wrong, `Nobody mentioned [STEP-${s}].`);
    }
  }
  if (model.invent_rate > 0 && rng.chance(model.invent_rate)) {
    const clean = steps.map((_, i) => i + 1).filter((s) => !errors.has(s) && !cited.has(s));
    if (clean.length > 0) {
      const s = rng.pick(clean);
      raise(s, (impact) => describeInvented(rng, s, impact, b.words_per_point).what_went_wrong, `[STEP-${s}] looks off to me.`);
    }
  }
  return out;
}
