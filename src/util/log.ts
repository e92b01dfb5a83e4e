/**
 * Operational log: one event per line on stderr, as a human line (`text`, the default) or as a
 * JSON object (`json`, written by pino). Every event has a level name, a component (cli, stage,
 * kafka, s3, llm, ...) and a message, plus ids where they help (record_id, range, unit, endpoint,
 * key, path). Every event passes the secret redactor before it is written.
 *
 * Each thread holds one sink (the `run` worker configures its own from the parent's settings).
 * `logger(component)` may be called at import time: it looks the sink up on every event.
 */
import { createRequire } from 'node:module';
import type { Logger as PinoLogger } from 'pino';
import { createRedactor, type Redactor } from './redact.js';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'fatal'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ['text', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** Extra fields of an event; values that are undefined are left out. */
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  fatal(msg: string, fields?: LogFields): void;
  /** whether events of `level` are written (skip building costly fields otherwise) */
  enabled(level: LogLevel): boolean;
  /** a logger for a sub-component: `kafka` -> `kafka.Connection` */
  child(component: string): Logger;
  readonly component: string;
}

/** What the command line chose; plain data so it can cross to the worker thread. */
export interface LogSettings {
  format: LogFormat;
  /** debug-level events and stacks of fatal errors */
  debug: boolean;
}

interface Sink {
  settings: LogSettings;
  write(level: LogLevel, component: string, msg: string, fields: LogFields): void;
}

const RANK: Record<LogLevel, number> = { debug: 20, info: 30, warn: 40, error: 50, fatal: 60 };

let redactor: Redactor = createRedactor();
let extraSecrets: string[] = [];
let sink: Sink = textSink({ format: 'text', debug: false }, (s) => process.stderr.write(s));

/**
 * Sets this thread's format and level. `write` replaces stderr (tests); JSON loads pino here,
 * so commands that log only text never pay for it.
 */
export function configureLogging(settings: LogSettings, write?: (line: string) => void): void {
  redactor = createRedactor(process.env, extraSecrets);
  sink = settings.format === 'json' ? jsonSink(settings, write) : textSink(settings, write ?? ((s) => process.stderr.write(s)));
}

export function logSettings(): LogSettings {
  return sink.settings;
}

/**
 * Secrets the environment scan cannot spot by name (an endpoint's `api_key_env` can be called
 * anything, a SASL password): every later event is redacted of them too.
 */
export function addLogSecrets(values: Iterable<string | undefined>): void {
  const more = [...values].filter((v): v is string => typeof v === 'string' && v.length > 0);
  if (more.length === 0) return;
  extraSecrets = [...new Set([...extraSecrets, ...more])];
  redactor = createRedactor(process.env, extraSecrets);
}

/** `value` with this thread's log secrets redacted (for what another thread will log). */
export function redactForLog<T>(value: T): T {
  return redactor.deep(value);
}

/** A logger writing to this thread's sink, as configured when each event is written. */
export function logger(component: string): Logger {
  return loggerOn(() => sink, component);
}

/**
 * A logger that writes text lines to `write`, every level included: for tests and for callers
 * that collect lines themselves. Secrets are still redacted.
 */
export function lineLogger(write: (line: string) => void, component = 'test'): Logger {
  const own = textSink({ format: 'text', debug: true }, write);
  return loggerOn(() => own, component);
}

function loggerOn(current: () => Sink, component: string): Logger {
  const enabled = (level: LogLevel) => RANK[level] >= (current().settings.debug ? RANK.debug : RANK.info);
  const at = (level: LogLevel) => (msg: string, fields: LogFields = {}) => {
    if (!enabled(level)) return;
    current().write(level, component, redactor.text(msg), redactor.deep(defined(fields)));
  };
  return {
    component,
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    fatal: at('fatal'),
    enabled,
    child: (sub) => loggerOn(current, `${component}.${sub}`),
  };
}

function defined(fields: LogFields): LogFields {
  const out: LogFields = {};
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) out[k] = v;
  return out;
}

/** How a field value reads in a text line. */
function fieldText(v: unknown): string {
  if (typeof v === 'string') return /\s/.test(v) ? JSON.stringify(v) : v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

const WORDISH = /[\p{L}\p{N}_]/u;

/** Whether `msg` already shows `value` as a whole (so "0" is not found in "HTTP 401"). */
function namedIn(msg: string, value: string): boolean {
  for (let at = msg.indexOf(value); at >= 0; at = msg.indexOf(value, at + 1)) {
    const before = msg[at - 1] ?? ' ';
    const after = msg[at + value.length] ?? ' ';
    if (!WORDISH.test(before) && !WORDISH.test(after)) return true;
  }
  return false;
}

/**
 * One human line, as the commands always printed them: `reasoning-jury: [component: ][level: ]msg`,
 * then the fields the message does not already name, then the hint; a stack (debug) follows on
 * its own lines, since it is for the person who asked for it.
 */
export function textLine(level: LogLevel, component: string, msg: string, fields: LogFields): string {
  const { hint, stack, ...rest } = fields;
  const extras = Object.entries(rest)
    .map(([k, v]) => [k, fieldText(v)] as const)
    .filter(([, v]) => !namedIn(msg, v))
    .map(([k, v]) => `${k}=${v}`);
  const where = component === 'cli' ? '' : `${component}: `;
  const tag = level === 'info' || level === 'fatal' ? '' : `${level}: `;
  const tail = `${extras.length ? ` (${extras.join(', ')})` : ''}${typeof hint === 'string' ? `; ${hint}` : ''}`;
  const line = `reasoning-jury: ${where}${tag}${msg}${tail}`;
  return typeof stack === 'string' ? `${line}\n${stack}\n` : `${line}\n`;
}

function textSink(settings: LogSettings, write: (line: string) => void): Sink {
  return { settings, write: (level, component, msg, fields) => write(textLine(level, component, msg, fields)) };
}

function jsonSink(settings: LogSettings, write?: (line: string) => void): Sink {
  // Loaded here, not at the top: about 40 ms of CPU that text runs (the default) never need.
  const pino = createRequire(import.meta.url)('pino') as typeof import('pino');
  const destination = write ? { write } : pino.destination({ fd: 2, sync: true });
  const root: PinoLogger = pino.pino(
    {
      level: settings.debug ? 'debug' : 'info',
      base: undefined,
      messageKey: 'msg',
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
  const children = new Map<string, PinoLogger>();
  const forComponent = (c: string) => children.get(c) ?? children.set(c, root.child({ component: c })).get(c)!;
  return { settings, write: (level, component, msg, fields) => forComponent(component)[level](fields, msg) };
}
