/**
 * The log options every command shares (`--log-format`, `--debug`) and how a fatal error is
 * printed: one event, level fatal, naming what failed and what to do; the stack only with
 * `--debug`. Exit codes: 2 for errors the user can fix in the command or config, 1 otherwise.
 */
// Types only: the judging thread imports this file too, and has no use for commander itself.
import type { Command } from 'commander';
import { describeError, type ErrorReport } from '../util/error-report.js';
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
  /** the user can fix it in the command or config: exit 2, and the message is already the advice */
  usage: boolean;
  /** an exit code the error itself names (4: another writer holds the output) */
  exitCode?: number;
}

/** The exit code an error carries itself (LeaseHeldError: 4), if any. */
export const ownExitCode = (err: unknown): number | undefined => {
  const code = (err as { exitCode?: unknown } | null)?.exitCode;
  return typeof code === 'number' && Number.isInteger(code) && code > 0 ? code : undefined;
};

export function fatalReport(err: unknown, usage: boolean): FatalReport {
  const exitCode = ownExitCode(err);
  // An error with its own exit code is written as advice, like a usage error.
  if (exitCode !== undefined) return { message: (err as Error).message, fields: {}, usage: true, exitCode };
  if (!usage) return { ...describeError(err), usage };
  // A usage message is written to be read as it is (a config error lists one problem a line).
  const stack = err instanceof Error ? err.stack : undefined;
  const fields = (err as { logFields?: Record<string, string> } | null)?.logFields ?? {};
  return { message: err instanceof Error ? err.message : String(err), fields, usage, ...(stack ? { stack } : {}) };
}

/** An error whose report was made elsewhere (the judging thread): printed as it is. */
export class ReportedError extends Error {
  constructor(readonly report: FatalReport) {
    super(report.message);
  }
}

/** Writes the fatal event and returns the exit code. */
export function printFatal(report: FatalReport): number {
  const debug = logSettings().debug;
  const hint = report.hint ?? (report.usage || debug ? undefined : 'run again with --debug for the stack');
  logger('cli').fatal(report.message, { ...report.fields, ...(hint ? { hint } : {}), ...(debug && report.stack ? { stack: report.stack } : {}) });
  return report.exitCode ?? (report.usage ? 2 : 1);
}
