/**
 * The argv of a batch command (`endpoints.<name>.batch.command`, dialect `command`): the
 * configured line with `{input}`, `{output}` and `{model}` filled in. A line without shell syntax
 * is split into words here (single and double quotes, backslash escapes) and run directly, each
 * placeholder inside one word, so a path with spaces stays one argument. A line holding one of
 * `| & ; < > $` or a backtick needs a shell: it runs under `/bin/sh -c`, each value single-quoted.
 */

export type Placeholders = Readonly<Record<'input' | 'output' | 'model', string>>;

const SHELL_SYNTAX = /[|&;<>$`]/;
const PLACEHOLDER = /\{(input|output|model)\}/g;

export function needsShell(command: string): boolean {
  return SHELL_SYNTAX.test(command);
}

/** The program and arguments to spawn for `command` with these values. */
export function commandArgv(command: string, values: Placeholders): string[] {
  if (needsShell(command)) return ['/bin/sh', '-c', command.replace(PLACEHOLDER, (_m, k: keyof Placeholders) => shellQuote(values[k]))];
  const words = splitWords(command);
  if (words.length === 0) throw new Error('batch.command is empty');
  return words.map((w) => w.replace(PLACEHOLDER, (_m, k: keyof Placeholders) => values[k]));
}

export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Words of a command line as a POSIX shell splits them (no expansions); an open quote is an error. */
export function splitWords(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word += c;
    } else if (c === '\\' && i + 1 < line.length && (quote === undefined || '"\\$`'.includes(line[i + 1]!))) {
      word = (word ?? '') + line[++i];
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
      else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      word ??= '';
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else {
      word = (word ?? '') + c;
    }
  }
  if (quote) throw new Error(`batch.command has an unclosed ${quote} quote`);
  if (word !== undefined) words.push(word);
  return words;
}
