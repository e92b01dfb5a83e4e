import type { Impact } from '../../schemas/defect.js';
import type { Rng } from '../util/prng.js';

/**
 * Wording of simulated findings. The text is synthetic but shaped like the paper's accepted
 * example (App. A): it cites [STEP-n], quotes the step verbatim, says what is wrong and gives a
 * correction, so code that checks grounding (quotes really occur in the step) sees real quotes.
 */

const REASONS: Record<Impact, readonly string[]> = {
  fatal: [
    'applies a rule that does not hold in general, so every later use of it inherits a false identity',
    'reverses the direction of the relation, so the bound it derives points the wrong way',
    'invokes a misremembered formula; the relation it states is not the standard one',
    'asserts as fact a property the problem never gives and which is false in general',
  ],
  major: [
    'makes an arithmetic slip, so the value carried forward is wrong',
    'drops a constraint stated in the problem and admits cases that should be excluded',
    'misreads a quantity from an earlier step and substitutes the wrong value',
    'skips a case in the case analysis, so the count it reaches is incomplete',
  ],
  minor: [
    'rounds too early, which shifts the last digit of the intermediate result',
    'switches notation for the same quantity, which makes the next substitution ambiguous',
    'overstates what was shown, although the conclusion still follows',
  ],
  neutral: [
    'takes a longer route than needed, although the method is valid',
    'restates an earlier result without adding anything to the argument',
  ],
};

const FILLER = [
  'Recomputing the expression from the quantities given in the problem gives a different result.',
  'Nothing earlier in the trace justifies this move.',
  'The later steps rely on this value, so the slip is not cosmetic.',
  'Checking the claim against the previous step exposes the discrepancy directly.',
  'Substituting a small test case into the stated relation shows that it fails.',
  'The trace never returns to verify this claim before building on it.',
  'A careful reader would expect the step to cite the condition it relies on.',
  'The final response repeats the consequence of this step without revisiting it.',
];

const CORRECTIONS: Record<Impact, readonly string[]> = {
  fatal: ['Use the correct general rule here; the stated identity must be replaced before any value is derived from it.'],
  major: ['Redo the computation with the values given in the problem and carry the corrected result forward.'],
  minor: ['Keep full precision and one notation until the final step.'],
  neutral: [],
};

function words(s: string): number {
  return s.split(/\s+/).filter(Boolean).length;
}

/** An exact substring of `text` made of whole whitespace-separated words (4-10 of them, at most ~120 chars). */
export function quoteFragment(rng: Rng, text: string): string {
  const spans = [...text.matchAll(/\S+/g)];
  if (spans.length === 0) return '';
  const len = Math.min(spans.length, rng.int(4, 10));
  const first = rng.int(0, spans.length - len);
  const a = spans[first]!;
  const b = spans[first + len - 1]!;
  const quote = text.slice(a.index, b.index + b[0].length);
  return quote.length > 120 ? quote.slice(0, 120) : quote;
}

// Invented evidence: phrases no trace step holds, around a number of five digits, so no run of a
// step is within the grounding threshold of one. `isInventedQuote` recognises them (benchmarks
// use it to tell invented findings from genuine ones; the pipeline never sees it).
const INVENTED_OPENERS = ['hence the tally climbs to', 'so the residue equals', 'we therefore obtain exactly', 'which pins the quotient at', 'giving a discriminant of'];
const INVENTED_CLOSERS = ['after folding both brackets', 'once the spare term cancels', 'by the doubled pivot rule', 'with the carried remainder', 'under the swapped ordering'];
const INVENTED = new RegExp(`^(?:${INVENTED_OPENERS.join('|')}) \\d{5} (?:${INVENTED_CLOSERS.join('|')})$`);

/** A quote that is not in any trace: an opener, a five-digit number and a closer. */
export function inventedQuote(rng: Rng): string {
  return `${rng.pick(INVENTED_OPENERS)} ${rng.int(10_000, 99_999)} ${rng.pick(INVENTED_CLOSERS)}`;
}

export function isInventedQuote(text: string): boolean {
  return INVENTED.test(text.trim());
}

/** An invented finding about `step`: its description and evidence quote `inventedQuote`, not the step. */
export function describeInvented(rng: Rng, step: number, impact: Impact, targetWords: number): DefectText {
  const quote = inventedQuote(rng);
  let text = `[STEP-${step}] states '${quote}', which ${rng.pick(REASONS[impact])}.`;
  const goal = Math.max(1, Math.round(targetWords * (0.75 + 0.5 * rng.next())));
  while (words(text) < goal) text += ` ${rng.pick(FILLER)}`;
  return { what_went_wrong: text, evidence: `[STEP-${step}] '${quote}'` };
}

export interface DefectText {
  what_went_wrong: string;
  evidence: string;
  correct_value?: string;
}

/**
 * A finding about `refs` (1-based) of `steps` (rendered step texts), about `targetWords` long.
 * The first cited step carries the error; a second one inherits it.
 */
export function describeDefect(rng: Rng, steps: readonly string[], refs: readonly number[], impact: Impact, targetWords: number): DefectText {
  const quotes = refs.map((r) => quoteFragment(rng, steps[r - 1] ?? ''));
  const [first, ...rest] = refs;
  let text = `[STEP-${first}] states '${quotes[0]}', which ${rng.pick(REASONS[impact])}.`;
  rest.forEach((r, i) => {
    text += ` [STEP-${r}] then builds on it ('${quotes[i + 1]}'), so the error carries forward.`;
  });
  // Jitter the length by +-25% so output sizes vary like a model's.
  const goal = Math.max(1, Math.round(targetWords * (0.75 + 0.5 * rng.next())));
  while (words(text) < goal) text += ` ${rng.pick(FILLER)}`;
  const evidence = refs.map((r, i) => `[STEP-${r}] '${quotes[i]}'`).join('; ');
  const fixes = CORRECTIONS[impact];
  return fixes.length ? { what_went_wrong: text, evidence, correct_value: rng.pick(fixes) } : { what_went_wrong: text, evidence };
}

/** reasoning_content of about `targetWords` words that walks over the steps it looked at. */
export function reasoningText(rng: Rng, steps: readonly string[], notes: readonly string[], targetWords: number): string {
  const parts = [`The trace has ${steps.length} steps; I go through them in order and check each claim against the problem.`, ...notes];
  let text = parts.join(' ');
  let i = 0;
  while (words(text) < targetWords && steps.length > 0) {
    const n = (i++ % steps.length) + 1;
    text += ` [STEP-${n}] '${quoteFragment(rng, steps[n - 1] ?? '')}' follows from what came before.`;
  }
  return text;
}

// ---- Output formats: how the reply text wraps (or breaks) the JSON -------------------------

export const OUTPUT_FORMATS = ['json', 'fenced', 'prose', 'malformed_repairable', 'malformed_broken', 'schema_invalid'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** Wrong shape, still valid JSON: each variant violates JudgementOutput in a way models do. */
function wrongShape(rng: Rng, value: Record<string, unknown>): unknown {
  const negs = value.negatives;
  if (Array.isArray(negs) && negs.length > 0) {
    const variant = rng.int(0, 2);
    const copy = negs.map((d) => ({ ...(d as object) })) as Array<Record<string, unknown>>;
    if (variant === 0) copy[0]!.impact = 'severe';
    else if (variant === 1) delete copy[0]!.what_went_wrong;
    else return { ...value, negatives: undefined, findings: copy };
    return { ...value, negatives: copy };
  }
  if (Array.isArray(negs)) return rng.chance(0.5) ? { findings: [] } : { negatives: 'none' };
  const [k, v] = Object.entries(value)[0] ?? ['result', null];
  return { [`${k}_list`]: v };
}

/** Render a JSON reply in the chosen format. Broken variants are checked against jsonrepair in the tests. */
export function renderJson(rng: Rng, value: Record<string, unknown>, format: OutputFormat): string {
  const json = JSON.stringify(value, null, 2);
  switch (format) {
    case 'json':
      return json;
    case 'fenced':
      return '```json\n' + json + '\n```';
    case 'prose':
      return `${rng.pick(['Here is my audit of the trace.', 'I checked every step of the trace against the problem.', 'Audit complete; the findings follow.'])}\n\n${json}\n\n${rng.pick(['These are all the flaws that pass both tests.', 'Let me know if any finding needs more detail.', 'No other step shows a grounded flaw.'])}`;
    case 'malformed_repairable': {
      // A trailing comma, or a reply cut off before its last brace: jsonrepair fixes both.
      const at = json.lastIndexOf(']');
      if (rng.chance(0.5) && at > 0 && json[at - 1] !== '[') return json.slice(0, at) + ',' + json.slice(at);
      return json.slice(0, json.lastIndexOf('}')).trimEnd();
    }
    case 'malformed_broken': {
      // Doubled separators and stray brackets after the first key: no repair recovers it.
      const firstColon = json.indexOf(':');
      return json.slice(0, firstColon) + ':: [[{{' + json.slice(firstColon + 1);
    }
    case 'schema_invalid':
      return JSON.stringify(wrongShape(rng, value), null, 2);
  }
}
