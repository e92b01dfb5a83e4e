/**
 * Text normalisation for grounding: a quote and a step are compared as token sequences after
 * both pass through `normalise`, so formatting a model changes when it copies a step does not
 * count as a difference. What is folded:
 * - case, Unicode compatibility forms (NFKC), curly quotes and dashes;
 * - whitespace of any kind and amount;
 * - LaTeX: `$`, `\(` `\)` `\[` `\]`, `\frac{a}{b}` (and `\dfrac`, `\tfrac`) as `a / b`,
 *   `\cdot` / `\times` / `×` as `*`, `\div` / `÷` as `/`, `\le` / `\ge` / `\neq` and their
 *   symbols, spacing commands and `\left` / `\right` dropped, any other command as its name
 *   (`\pi` -> `pi`, `\text{km}` -> `km`), braces dropped;
 * - numbers: thousands separators (`1,000` -> `1000`) and trailing decimal zeros
 *   (`1000.0` -> `1000`, `2.50` -> `2.5`).
 * Punctuation other than mathematical operators is dropped by the tokeniser.
 */

const SYMBOLS: ReadonlyArray<[RegExp, string]> = [
  [/[\u2018\u2019\u201b\u2032]/g, "'"],
  [/[\u201c\u201d\u201e\u2033]/g, '"'],
  [/[\u2010-\u2015\u2212]/g, '-'],
  [/[\u00d7\u00b7\u22c5]/g, ' * '],
  [/\u00f7/g, ' / '],
  [/\u2264/g, ' <= '],
  [/\u2265/g, ' >= '],
  [/\u2260/g, ' != '],
];

const COMMANDS: ReadonlyArray<[RegExp, string]> = [
  [/\\(?:cdot|times|ast)(?![a-z])/g, ' * '],
  [/\\div(?![a-z])/g, ' / '],
  [/\\(?:leq?|leqslant)(?![a-z])/g, ' <= '],
  [/\\(?:geq?|geqslant)(?![a-z])/g, ' >= '],
  [/\\(?:neq?|ne)(?![a-z])/g, ' != '],
  [/\\(?:left|right|big|bigg|displaystyle|quad|qquad)(?![a-z])/g, ' '],
  [/\\[,;:! ]/g, ' '],
  [/\\[()[\]]/g, ' '],
];

function latex(t: string): string {
  let out = t;
  // \frac{a}{b} -> a / b; repeated for nested fractions (innermost first).
  for (let i = 0; i < 4; i++) {
    const next = out.replace(/\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}/g, ' $1 / $2 ');
    if (next === out) break;
    out = next;
  }
  for (const [re, to] of COMMANDS) out = out.replace(re, to);
  // Any other command: its name (\pi -> pi, \text{km} -> text km, then `text` is dropped below).
  out = out.replace(/\\(?:text|mathrm|mathbf|mathit|operatorname|boxed)\s*/g, ' ').replace(/\\([a-z]+)/g, ' $1 ');
  return out.replace(/[{}$]/g, ' ');
}

function numbers(t: string): string {
  let out = t;
  // 1,000,000 -> 1000000 (only groups of exactly three digits, so "1, 2, 3" stays a list)
  for (let i = 0; i < 4; i++) {
    const next = out.replace(/(\d),(\d{3})(?!\d)/g, '$1$2');
    if (next === out) break;
    out = next;
  }
  // 2.50 -> 2.5, 1000.0 -> 1000 (not inside a longer dotted run such as a version or a date)
  return out.replace(/(\d+)\.(\d*?)0+(?![\d.])/g, (_m, a: string, b: string) => (b ? `${a}.${b}` : a));
}

/** The normalised text: lower case, LaTeX and number formatting folded, whitespace collapsed. */
export function normalise(text: string): string {
  let t = text.normalize('NFKC').toLowerCase();
  for (const [re, to] of SYMBOLS) t = t.replace(re, to);
  t = numbers(latex(t));
  return t.replace(/\s+/g, ' ').trim();
}

/** Words, numbers (with their decimal part) and runs of operator symbols of normalised text. */
export function tokens(text: string): string[] {
  return normalise(text).match(/[a-z]+|\d+(?:\.\d+)?|[=<>+\-*/^!%]+/g) ?? [];
}
