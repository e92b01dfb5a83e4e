/**
 * The log options every command shares (`--log-format`, `--debug`) and how a fatal error is
 * printed: one event, level fatal, naming what failed and what to do; the stack only with
 * `--debug`. The error's kind decides the exit code and how the line is written (util/errors.ts).
 */
// Types only: the judging thread imports this file too, and has no use for commander itself.
import type { Command } from 'commander';
import { describeError, type ErrorReport } from '../util/error-report.js';
import { ERROR_KINDS, errorKindOf, ReasoningJuryError, type ErrorKind } from '../util/errors.js';
import { configureLogging, LOG_FORMATS, logger, logSettings, type LogFormat, type LogSettings } from '../util/log.js';

/** The environment variable that sets --log-format (a container sets it once for every command). */
export const LOG_FORMAT_ENV = 'REASONING_JURY_LOG_FORMAT';

export const LOG_FORMAT_HELP =
  'text: one human line per event; json: one JSON object per line (time, level, component, msg, ids) for a log collector';

export function addLogOptions(program: Command): void {
  program
    .addOption(program.createOption('--log-format <format>', LOG_FORMAT_HELP).choices(LOG_FORMATS).default('text').env(LOG_FORMAT_ENV))
    .option('--debug', 'also write debug-level events, and the stack of a fatal error')
    // Global options go in each command's --help too, since they are given after the command.
    .configureHelp({ showGlobalOptions: true })
    .hook('preAction', () => applyLogSettings(logOptionsOf(program)));
}

/**
 * Configures this thread's log, and with JSON also Node's own warnings (a dependency's
 * deprecation or version notice): Node prints them as several plain lines, which would be the
 * only lines on stderr a collector could not parse.
 */
export function applyLogSettings(settings: LogSettings): void {
  configureLogging(settings);
  if (settings.format !== 'json' || warningsRouted) return;
  warningsRouted = true;
  process.removeAllListeners('warning');
  process.on('warning', (w) => logger('node').warn(w.message.replace(/\s*\n\s*/g, ' '), { name: w.name, ...((w as { code?: string }).code ? { code: (w as { code?: string }).code } : {}) }));
}

let warningsRouted = false;

export function logOptionsOf(program: Command): LogSettings {
  const o = program.opts<{ logFormat?: LogFormat; debug?: boolean }>();
  return { format: o.logFormat ?? 'text', debug: o.debug === true };
}

/**
 * Before commander has parsed anything (its own errors, e.g. an unknown option): whether the
 * command line or environment asked for JSON, so even those come out as JSON events.
 */
export function jsonRequested(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): boolean {
  const i = argv.indexOf('--log-format');
  if (i >= 0) return argv[i + 1] === 'json';
  if (argv.includes('--log-format=json')) return true;
  return !argv.some((a) => a.startsWith('--log-format=')) && env[LOG_FORMAT_ENV] === 'json';
}

/** A fatal error as plain data (it crosses from the judging thread to the main one). */
export interface FatalReport extends ErrorReport {
  /** decides the exit code and whether the message is printed as it is (ERROR_KINDS) */
  kind: ErrorKind;
}

export function fatalReport(err: unknown): FatalReport {
  if (err instanceof ReportedError) return err.report;
  const kind = errorKindOf(err);
  const rule = ERROR_KINDS[kind];
  if (!rule.asIs) return { ...describeError(err), kind };
  // Written to be read as it is (a config error lists one problem a line).
  const stack = rule.stack && err instanceof Error ? err.stack : undefined;
  return { message: err instanceof Error ? err.message : String(err), fields: logFieldsOf(err), kind, ...(stack ? { stack } : {}) };
}

/** Fields an error asks to be logged with (OutputFolderError: the path and the errno code). */
const logFieldsOf = (err: unknown): Record<string, string> => (err as { logFields?: Record<string, string> } | null)?.logFields ?? {};

/** An error whose report was made elsewhere (the judging thread): printed as it is. */
export class ReportedError extends ReasoningJuryError {
  constructor(readonly report: FatalReport) {
    super(report.message);
  }

  override get kind(): ErrorKind {
    return this.report.kind;
  }
}

/** Writes the fatal event and returns the exit code. */
export function printFatal(report: FatalReport): number {
  const debug = logSettings().debug;
  const rule = ERROR_KINDS[report.kind];
  const hint = report.hint ?? (rule.asIs || debug ? undefined : 'run again with --debug for the stack');
  logger('cli').fatal(report.message, { ...report.fields, ...(hint ? { hint } : {}), ...(debug && report.stack ? { stack: report.stack } : {}) });
  return rule.exitCode;
}
