// Issue 37, point 5: one error base whose kind decides the exit code and how the fatal line is
// written, recognised across module copies; anything else is internal (exit 1).
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { OtherGroupError } from '../../connectors/kafka/group-marker.js';
import { RunStoppedError, UsageError } from '../../src/cli/io.js';
import { fatalReport, printFatal, ReportedError } from '../../src/cli/logging.js';
import { OutputFolderError } from '../../src/compose/output-claim.js';
import { RangeSettingsMismatch } from '../../src/compose/resume.js';
import { ConfigError } from '../../src/config/load.js';
import { EndpointFaultError, EndpointOutageError } from '../../src/llm/outage.js';
import { ProviderError } from '../../src/llm/types.js';
import { ModelNotFoundError } from '../../src/models/cache.js';
import { InputChangedError } from '../../src/pipeline/input-identity.js';
import { OutputGoneError } from '../../src/pipeline/storage/object-store.js';
import { LeaseHeldError, LeaseLostError } from '../../src/pipeline/commit/output-lease.js';
import { StorageError } from '../../src/pipeline/storage/storage-error.js';
import { SegmentationError } from '../../src/segment/index.js';
import { ERROR_KINDS, errorKindOf, ReasoningJuryError, type ErrorKind } from '../../src/util/errors.js';
import { configureLogging } from '../../src/util/log.js';

/** The exit codes scripts depend on (docs/architecture.md, "Errors and exit codes"), written out here, not read from the table. */
const EXPECTED: Record<ErrorKind, number> = { usage: 2, config: 2, input: 2, endpoint: 3, lease: 4, output: 1, storage: 1, internal: 1 };

const holder = { version: 1 as const, scope: 'output', generation: 3, owner: 'o', host: 'h', pid: 42, command: 'run', acquired_at: '2026-01-01T00:00:00Z', expires_at: '2026-01-01T00:02:00Z' };
const settings = { max_records: 10, max_chars: 1000, formats: ['parquet' as const] };

/** One real error of each class that ends commands, with the kind it must have. */
const REAL: Array<[string, unknown, ErrorKind]> = [
  ['UsageError', new UsageError('--concurrency must be a positive integer'), 'usage'],
  ['OutputFolderError', new OutputFolderError('--out /a is inside --input /'), 'usage'],
  ['OtherGroupError', new OtherGroupError('out is written by consumer group "g1"'), 'usage'],
  ['ConfigError', new ConfigError('invalid config:\n  - seats: required'), 'config'],
  ['ModelNotFoundError', new ModelNotFoundError('unknown model "x"'), 'config'],
  ['SegmentationError', new SegmentationError('no steps'), 'input'],
  ['InputChangedError', new InputChangedError('a.jsonl', 'its size changed'), 'input'],
  ['RangeSettingsMismatch', new RangeSettingsMismatch('out', settings, { ...settings, max_records: 20 }), 'input'],
  ['EndpointOutageError', new EndpointOutageError('sim', 90_000, 60_000, 'ECONNREFUSED'), 'endpoint'],
  ['EndpointFaultError', new EndpointFaultError('sim', 'auth', 'endpoint "sim" refused the API key'), 'endpoint'],
  ['RunStoppedError', new RunStoppedError('endpoint "sim" has been down'), 'endpoint'],
  ['LeaseHeldError', new LeaseHeldError('out', holder), 'lease'],
  ['LeaseLostError', new LeaseLostError('the lease of out went to another writer'), 'output'],
  ['OutputGoneError', new OutputGoneError('/tmp/out'), 'output'],
  [
    'StorageError',
    new StorageError({ op: 'write', key: 'k', location: '/tmp/out/k', store: '/tmp/out', code: 'ENOSPC', detail: 'no space left on device', why: 'not-retryable', waitedMs: 0 }),
    'storage',
  ],
  ['ProviderError', new ProviderError('HTTP 500', true, 500), 'internal'],
  ['a plain Error', new Error('boom'), 'internal'],
  ['a thrown string', 'boom', 'internal'],
];

/** Prints the report through the real fatal path and returns [exit code, the lines logged]. */
function print(err: unknown, debug = false): [number, string[]] {
  const lines: string[] = [];
  configureLogging({ format: 'json', debug }, (l) => lines.push(l));
  const code = printFatal(fatalReport(err));
  return [code, lines.join('').split('\n').filter((l) => l !== '')];
}

afterEach(() => configureLogging({ format: 'text', debug: false }));

describe('error kinds and exit codes', () => {
  it('names every kind, each with its exit code', () => {
    expect(Object.keys(ERROR_KINDS).sort()).toEqual(Object.keys(EXPECTED).sort());
    for (const kind of Object.keys(EXPECTED) as ErrorKind[]) {
      const err = new (class extends ReasoningJuryError {
        override get kind() {
          return kind;
        }
      })(`a ${kind} problem`);
      const [code, lines] = print(err);
      expect(code, kind).toBe(EXPECTED[kind]);
      expect(lines, kind).toHaveLength(1);
      expect(JSON.parse(lines[0]!).msg, kind).toBe(`a ${kind} problem`);
    }
  });

  it.each(REAL)('%s has its kind and exits with its code', (_name, err, kind) => {
    expect(errorKindOf(err)).toBe(kind);
    expect(print(err)[0]).toBe(EXPECTED[kind]);
  });

  it('prints advice as it is, and a failure with its causes and the --debug hint', () => {
    const advice = new ConfigError('invalid config:\n  - seats: required');
    const [, [line]] = print(advice);
    expect(JSON.parse(line!)).toMatchObject({ level: 'fatal', msg: 'invalid config:\n  - seats: required' });
    expect(JSON.parse(line!).hint).toBeUndefined();

    const failure = new Error('could not write the shard', { cause: Object.assign(new Error('disk gone'), { path: '/tmp/x' }) });
    const [, [described]] = print(failure);
    expect(JSON.parse(described!)).toMatchObject({ msg: 'could not write the shard: disk gone', path: '/tmp/x', hint: 'run again with --debug for the stack' });
  });

  it('adds the stack with --debug except where the line says all there is', () => {
    expect(JSON.parse(print(new UsageError('bad flag'), true)[1][0]!).stack).toContain('bad flag');
    expect(JSON.parse(print(new LeaseHeldError('out', holder), true)[1][0]!).stack).toBeUndefined();
  });

  it('has the table of docs/architecture.md, "Errors and exit codes", row for row', () => {
    const doc = readFileSync(new URL('../../docs/architecture.md', import.meta.url), 'utf8');
    const section = doc.slice(doc.indexOf('## Errors and exit codes'), doc.indexOf('## Folder rules'));
    const rows = [...section.matchAll(/^\| `([a-z]+)` \| (\d+) \|/gm)].map((m) => [m[1], Number(m[2])]);
    expect(Object.fromEntries(rows)).toEqual(EXPECTED);
  });

  it('keeps the kind of a report made in the judging thread', () => {
    const report = fatalReport(new LeaseHeldError('out', holder));
    // The worker posts plain data: what arrives is a structured clone, not the error.
    const arrived = new ReportedError(structuredClone(report));
    expect(errorKindOf(arrived)).toBe('lease');
    expect(print(arrived)[0]).toBe(4);
  });
});

describe('ReasoningJuryError.isInstance', () => {
  it('recognises every subclass, and nothing else', () => {
    for (const [name, err, kind] of REAL) expect(ReasoningJuryError.isInstance(err), name).toBe(kind !== 'internal' || err instanceof ProviderError);
    expect(ReasoningJuryError.isInstance(new Error('x'))).toBe(false);
    expect(ReasoningJuryError.isInstance(null)).toBe(false);
    expect(ReasoningJuryError.isInstance({ kind: 'usage', message: 'looks like one' })).toBe(false);
  });

  it('makes a look-alike without the marker internal: no exit code from an ad hoc field or name', () => {
    expect(errorKindOf(Object.assign(new Error('held'), { exitCode: 4, kind: 'lease' }))).toBe('internal');
    expect(errorKindOf(Object.assign(new Error('down'), { name: 'EndpointOutageError' }))).toBe('internal');
    expect(print(Object.assign(new Error('held'), { exitCode: 4 }))[0]).toBe(1);
  });

  it('recognises an error from another copy of the module, where instanceof does not', async () => {
    vi.resetModules();
    const other = await import('../../src/util/errors.js');
    expect(other.ReasoningJuryError).not.toBe(ReasoningJuryError);
    const foreign = new (class extends other.ReasoningJuryError {
      override get kind() {
        return 'lease' as const;
      }
    })('held elsewhere');
    expect(foreign instanceof ReasoningJuryError).toBe(false);
    expect(ReasoningJuryError.isInstance(foreign)).toBe(true);
    expect(errorKindOf(foreign)).toBe('lease');
    expect(print(foreign)[0]).toBe(4);
  });

  it('leaves the fields of a logged error as they were (marker and kind live on the prototype)', () => {
    expect(Object.keys(new UsageError('x'))).toEqual([]);
    expect(Object.getOwnPropertySymbols(new UsageError('x'))).toEqual([]);
  });
});
