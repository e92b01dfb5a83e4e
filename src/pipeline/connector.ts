/**
 * How a connector plugs in: it registers what it reads (an input) or writes (an output) under a
 * URL scheme, from its own entry module (connectors/<name>.ts beside the connector's folder),
 * and src/compose/connectors.ts imports each such module once. The commands look connectors up here by the URL they are
 * given, so adding one touches no branch of theirs (docs/extending.md).
 *
 * A registration module stays small: it loads its connector's code (kafkajs, the AWS SDK, the
 * Parquet readers) with a dynamic import inside `open`, so a run loads only what it uses.
 */
import type { JuryConfig } from '../../schemas/config.js';
import type { ObjectStore } from './storage/object-store.js';
import type { RangeSink } from './sink.js';
import type { CommittedRanges, Source } from './source.js';

/** The config sections connectors read. */
export type ConnectorConfig = Pick<JuryConfig, 'kafka' | 's3'>;

export interface InputContext {
  config: ConnectorConfig;
  /** the output: a Kafka source reads earlier owners' manifests there */
  store: ObjectStore;
  /** ranges already in the output (inputs that resume by manifests skip them) */
  committed: CommittedRanges;
  rank: number;
  worldSize: number;
  untilCaughtUp: boolean;
  signal: AbortSignal;
  /** kafka:// input: write an output another consumer group has recorded (with a warning) */
  allowOtherGroup?: boolean;
  /** the output's location, for messages */
  location?: string;
  /** publishes a range an earlier owner committed but did not publish (its manifest key) */
  publishCommitted(manifestKey: string): Promise<void>;
}

export interface OpenedInput {
  source: Source;
  sinks: RangeSink[];
  /** units arrive one after another (files, objects), or interleave (partitions) */
  sequentialUnits: boolean;
  /** resumes by the consumer group's offsets rather than by the output's manifests */
  resumesFromGroup: boolean;
  close(): Promise<void>;
}

/**
 * Where an input lives, which decides the checks around it: `local` (a file or folder here:
 * --out may not nest with it, simulated jurors read its labels), `bucket` (an object-store
 * prefix: nesting checked), `stream` (neither).
 */
export type InputPlace = 'local' | 'bucket' | 'stream';

export interface InputConnector {
  /** the URL scheme it reads, without `://`; null: a local path (what a URL without a scheme is) */
  scheme: string | null;
  /** what `--input` may name for it, for `run --help` */
  help: string;
  place: InputPlace;
  /**
   * Resumes by a consumer group's offsets: no output lease (the group shares its output), no
   * re-reading from the start (--rejudge), no content check of committed ranges.
   */
  resumesFromGroup: boolean;
  /** reads this process's standard input: a command that judges in a worker thread hands it over */
  readsStdin?: boolean;
  /** set when the input has no end, saying why `estimate` cannot count it */
  unbounded?: string;
  open(url: string, ctx: InputContext): Promise<OpenedInput>;
}

export interface OutputTarget {
  store: ObjectStore;
  /** absolute folder or URL, for messages */
  location: string;
}

export interface OutputConnector {
  /** the URL scheme it writes, without `://`; null: a local folder */
  scheme: string | null;
  /** the location messages name for `url` (without opening anything) */
  location(url: string): string;
  /** the store, checked before any work starts (a bucket that is not there is one line) */
  open(url: string, config: ConnectorConfig): Promise<OutputTarget>;
}

const inputs = new Map<string | null, InputConnector>();
const outputs = new Map<string | null, OutputConnector>();

function register<T extends { scheme: string | null }>(into: Map<string | null, T>, what: string, c: T): void {
  if (into.has(c.scheme)) throw new Error(`two ${what} connectors registered for ${c.scheme === null ? 'local paths' : `${c.scheme}://`}`);
  into.set(c.scheme, c);
}

export const registerInput = (c: InputConnector): void => register(inputs, 'input', c);
export const registerOutput = (c: OutputConnector): void => register(outputs, 'output', c);

/** The scheme of `url` in lower case, or null for a plain path. */
export function schemeOf(url: string): string | null {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(url);
  return m ? m[1]!.toLowerCase() : null;
}

function lookup<T extends { scheme: string | null }>(from: Map<string | null, T>, url: string): T {
  const scheme = schemeOf(url);
  const found = from.get(scheme);
  if (found) return found;
  const schemes = [...from.keys()].filter((s): s is string => s !== null).sort();
  const written = scheme === null ? 'a local path' : `"${/^[^:]+/.exec(url)![0]}://"`;
  throw new Error(`unsupported URL scheme ${written} in ${url} (use ${schemes.map((s) => `${s}://`).join(', ')} or a local path)`);
}

/** The input connector for `url`, or undefined for a scheme none is registered for. */
export const findInputConnector = (url: string): InputConnector | undefined => inputs.get(schemeOf(url));
/** The input connector for `url`; an unknown `scheme://` is refused rather than taken for a path. */
export const inputConnector = (url: string): InputConnector => lookup(inputs, url);
/** The output connector for `url`, refused like inputConnector. */
export const outputConnector = (url: string): OutputConnector => lookup(outputs, url);
/** Every registered input, local paths first, then in the order they registered (for help texts). */
export const inputConnectors = (): InputConnector[] => [...inputs.values()].sort((a, b) => Number(b.scheme === null) - Number(a.scheme === null));
