import type { TranscriptTurn } from '../../../schemas/verdict.js';
import { saysAgreeAll, saysNothingNew } from '../../prompts/deliberation-wire.js';
import type { ModeratorEnding } from './schemas.js';

/**
 * Backstop termination checks run by the loop itself at the end of each logical round, for
 * when the moderator misses an ending or is down (round-robin fallback). The moderator stays
 * the primary judge of "substantive"; these only fire on unambiguous signals.
 */

function trigrams(text: string): Set<string> {
  const words = text.toLowerCase().match(/[a-z0-9]+(?:[-'][a-z0-9]+)*/g) ?? [];
  if (words.length < 3) return new Set([words.join(' ')]);
  const out = new Set<string>();
  for (let i = 0; i + 2 < words.length; i++) out.add(`${words[i]} ${words[i + 1]} ${words[i + 2]}`);
  return out;
}

/** Jaccard overlap of word trigrams, in [0, 1]. */
export function similarity(a: string, b: string): number {
  const x = trigrams(a);
  const y = trigrams(b);
  let both = 0;
  for (const t of x) if (y.has(t)) both++;
  const union = x.size + y.size - both;
  return union === 0 ? 1 : both / union;
}

const passes = (m: string) => saysNothingNew(m) || saysAgreeAll(m);

/**
 * `round` are the turns of the round that just ended, `before` everything earlier; `active`
 * the jurors still deliberating. Order of precedence: agreement, nothing new, cycling.
 */
export function detectEnding(round: readonly TranscriptTurn[], before: readonly TranscriptTurn[], active: readonly string[], cycleSimilarity: number): ModeratorEnding | null {
  // A skipped (failed) turn is not assent: every juror still deliberating must have spoken.
  if (round.length === 0 || !active.every((j) => round.some((t) => t.speaker === j))) return null;
  const lastOf = new Map<string, string>();
  for (const t of round) lastOf.set(t.speaker, t.message);
  if (active.every((j) => saysAgreeAll(lastOf.get(j)!))) return 'universal_agreement';
  if (round.every((t) => passes(t.message))) return 'no_new_arguments';
  let repeats = 0;
  const seen = [...before];
  for (const t of round) {
    const again = !passes(t.message) && seen.some((e) => e.speaker === t.speaker && !passes(e.message) && similarity(e.message, t.message) >= cycleSimilarity);
    if (again) repeats++;
    else if (!passes(t.message)) return null;
    seen.push(t);
  }
  return repeats > 0 ? 'cycling' : null;
}
