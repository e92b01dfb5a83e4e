/**
 * One base for every error the product throws on purpose. Its `kind` says whose problem it is,
 * and ERROR_KINDS turns a kind into the exit code and the way the fatal line is written: the
 * only place that decides either (docs/architecture.md, "Errors and exit codes"). Anything else
 * that reaches a command's end (a plain Error, a third-party error) is `internal`.
 */

/**
 * Symbol.for gives the same symbol in every copy of this module (the bundle's chunks, the run
 * worker, tests importing src/ beside a built dist/), where `instanceof` would say no.
 */
const MARKER: unique symbol = Symbol.for('reasoning-jury.error');

export interface KindRule {
  /** the process's exit code when an error of this kind ends a command */
  readonly exitCode: number;
  /**
   * the message is the advice, written to be read as it is: printed without its causes, fields
   * or the "run again with --debug" hint. Otherwise the line joins the causes' messages and
   * names what failed (util/error-report.ts).
   */
  readonly asIs: boolean;
  /** --debug adds the stack; false where the line says all there is and nothing needs debugging */
  readonly stack: boolean;
}

export const ERROR_KINDS = {
  /** the command line is wrong (a flag, a missing argument, --out inside --input) */
  usage: { exitCode: 2, asIs: true, stack: true },
  /** the config file (or something it names: a model, a taxonomy) is wrong */
  config: { exitCode: 2, asIs: true, stack: true },
  /** what the command was given to read cannot be used as it is (changed input, other range settings, no committed ranges) */
  input: { exitCode: 2, asIs: true, stack: true },
  /** an endpoint stopped the run: down past --max-outage, or a fault waiting cannot heal (401/403/404) */
  endpoint: { exitCode: 3, asIs: true, stack: true },
  /** another live writer holds the output's lease: nothing was changed */
  lease: { exitCode: 4, asIs: true, stack: false },
  /** the output went away or was taken over while the command ran, or there is none to read */
  output: { exitCode: 1, asIs: true, stack: false },
  /** the object store or file system failed (after retries where they apply) */
  storage: { exitCode: 1, asIs: false, stack: true },
  /** anything else: a failure no command turned into one of the above, or a bug */
  internal: { exitCode: 1, asIs: false, stack: true },
} as const satisfies Record<string, KindRule>;

export type ErrorKind = keyof typeof ERROR_KINDS;

export class ReasoningJuryError extends Error {
  // Both on the prototype, not on each error: a logged or redacted error's fields stay as they were.
  get [MARKER](): true {
    return true;
  }

  /** subclasses name their kind; the base alone is internal */
  get kind(): ErrorKind {
    return 'internal';
  }

  /** Whether `err` is one of ours, from any copy of this module. */
  static isInstance(err: unknown): err is ReasoningJuryError {
    return typeof err === 'object' && err !== null && (err as { [MARKER]?: unknown })[MARKER] === true;
  }
}

export const isErrorKind = (k: unknown): k is ErrorKind => typeof k === 'string' && Object.hasOwn(ERROR_KINDS, k);

/** The kind of whatever was thrown: ours says it, everything else is internal. */
export function errorKindOf(err: unknown): ErrorKind {
  return ReasoningJuryError.isInstance(err) && isErrorKind(err.kind) ? err.kind : 'internal';
}

/** The rule for whatever was thrown. */
export const kindRuleOf = (err: unknown): KindRule => ERROR_KINDS[errorKindOf(err)];
