/**
 * What deliberation prompts carry, in the prompt layer so both sides read one definition: the
 * jury's prompt builders frame blocks with these labels and fill in the fixed replies, the
 * termination detectors and the juror simulator recognise them.
 */

/**
 * Labels of the framed blocks deliberation prompts carry. Every juror statement and turn is
 * framed on its own (not the transcript as one block): a block's tag is a hash of its content
 * and sits in its BEGIN marker, so one growing block would change its first line on every turn
 * and break prefix caching at that point. Per-turn blocks only ever get appended.
 */
export const DELIB_BLOCK = {
  opening: 'OPENING STATEMENT',
  turn: 'PANEL TURN',
  settled: 'SETTLED FINDINGS',
  state: 'CONSENSUS STATE',
  changes: 'STATE CHANGES',
  instruction: 'MODERATOR INSTRUCTION',
  outcome: 'DELIBERATION OUTCOME',
} as const;

/** The two fixed replies the juror-turn prompt asks for; the wording lives in one place. */
export const NOTHING_NEW = 'I have no new arguments to present.';
export const AGREE_ALL = 'I agree with the panel on every point under discussion.';

function normalise(text: string): string {
  return text
    .toLowerCase()
    .replace(/[“”"'`*_]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

const NOTHING_NEW_N = normalise(NOTHING_NEW).replace(/\.$/, '');
const AGREE_ALL_N = normalise(AGREE_ALL).replace(/\.$/, '');

/** A reply that is the phrase, give or take a few words of courtesy around it. */
function isPhrase(message: string, phrase: string): boolean {
  const m = normalise(message);
  const at = m.indexOf(phrase);
  if (at < 0) return false;
  const rest = (m.slice(0, at) + ' ' + m.slice(at + phrase.length)).split(/\s+/).filter((w) => /[a-z0-9]/.test(w));
  return rest.length <= 12;
}

export function saysNothingNew(message: string): boolean {
  return isPhrase(message, NOTHING_NEW_N);
}

export function saysAgreeAll(message: string): boolean {
  return isPhrase(message, AGREE_ALL_N);
}
