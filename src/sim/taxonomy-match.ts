/**
 * How the simulator "reads" a defect against taxonomy nodes: bag-of-words overlap weighted by
 * how rare a word is among the nodes (idf), after dropping quoted trace text and stop words and
 * mapping common defect wording onto taxonomy vocabulary. Crude, but deterministic and good
 * enough that an arithmetic slip lands on a computation leaf and a skipped case on a case leaf.
 */

const STOP = new Set(
  'the a an and or of to in on for from with by as at is are was were be been being this that these those it its into than then so such which who whom what when where while not no nor but if else also only very more most less least each every any all some other step steps trace problem answer does did do done has have had can could would should may might must will shall one two same own we our you your they their them there here about after before over under up down out just'.split(
    ' ',
  ),
);

/** Defect wording -> words the taxonomy uses for the same idea. */
const SYNONYMS: Record<string, readonly string[]> = {
  arithmetic: ['calculation', 'numerical', 'computation'],
  slip: ['calculation', 'numerical'],
  miscalculat: ['calculation', 'numerical'],
  revers: ['reversing', 'direction', 'inequality'],
  relation: ['inequality', 'bound'],
  formula: ['formula', 'identity'],
  misremember: ['formula', 'incorrect'],
  assert: ['claim', 'fact'],
  property: ['claim', 'fact', 'mathematical'],
  constraint: ['constraint', 'omitting', 'stated'],
  drop: ['omitting'],
  misread: ['misusing', 'value', 'previously'],
  quantity: ['value', 'given'],
  substitut: ['substitution', 'misusing'],
  skip: ['incomplete', 'missing', 'case'],
  round: ['numerical', 'calculation'],
  notation: ['mislabeled', 'manipulation'],
  overstat: ['overgeneralization', 'argument'],
  restat: ['redundancy', 'verbose'],
  longer: ['verbose', 'redundancy'],
  route: ['verbose', 'redundancy'],
  guess: ['guessing', 'asserted', 'derivation'],
  truncat: ['truncated', 'incomplete'],
  loop: ['loop', 'cycling'],
};

/** Crude stemmer: enough to make "reverses", "reversing" and "reversed" meet. */
export function stem(word: string): string {
  for (const suf of ['ations', 'ation', 'ings', 'ing', 'edly', 'ed', 'es', 'ly', 's']) {
    if (word.length - suf.length >= 4 && word.endsWith(suf)) return word.slice(0, -suf.length);
  }
  return word;
}

/** Words of `text` (quoted material removed), stemmed, with synonyms added. */
export function terms(text: string, expand = true): string[] {
  const unquoted = text.replace(/'[^']*'/g, ' ').replace(/"[^"]*"/g, ' ').replace(/\[STEP-\d+\]/gi, ' ');
  const out: string[] = [];
  for (const raw of unquoted.toLowerCase().split(/[^a-z]+/)) {
    if (raw.length < 3 || STOP.has(raw)) continue;
    const s = stem(raw);
    out.push(s);
    if (!expand) continue;
    for (const [cue, words] of Object.entries(SYNONYMS)) if (raw.startsWith(cue)) for (const w of words) out.push(stem(w));
  }
  return out;
}

export interface MatchNode {
  id: string;
  /** the node's own name: its words count double */
  name: string;
  description: string;
}

export interface Matcher {
  /** node ids by descending score, ties in node order; empty when nothing overlaps */
  rank(text: string): Array<{ id: string; score: number }>;
}

/** A matcher over `nodes`; idf is computed over the nodes themselves. */
export function createMatcher(nodes: readonly MatchNode[]): Matcher {
  const docs = nodes.map((n) => {
    const w = new Map<string, number>();
    for (const t of terms(n.name, false)) w.set(t, (w.get(t) ?? 0) + 2);
    for (const t of terms(n.description, false)) w.set(t, (w.get(t) ?? 0) + 1);
    return w;
  });
  const df = new Map<string, number>();
  for (const d of docs) for (const t of d.keys()) df.set(t, (df.get(t) ?? 0) + 1);
  const idf = (t: string) => Math.log(1 + nodes.length / (df.get(t) ?? nodes.length));
  return {
    rank(text) {
      // The first sentence usually names the mistake; the rest is supporting detail.
      const cut = text.search(/[.!?](\s|$)/);
      const head = new Set(terms(cut > 0 ? text.slice(0, cut) : text));
      const all = new Set(terms(text));
      const scored = docs.map((d, i) => {
        let s = 0;
        for (const t of all) {
          const w = d.get(t);
          if (w) s += idf(t) * Math.min(w, 3) * (head.has(t) ? 2 : 1);
        }
        return { id: nodes[i]!.id, score: s / Math.sqrt(1 + d.size), order: i };
      });
      return scored
        .filter((s) => s.score > 0)
        .sort((a, b) => b.score - a.score || a.order - b.order)
        .map(({ id, score }) => ({ id, score }));
    },
  };
}
