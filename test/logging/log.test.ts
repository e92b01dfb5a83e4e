import { afterEach, describe, expect, it } from 'vitest';
import { addLogSecrets, configureLogging, lineLogger, logger, textLine } from '../../src/util/log.js';

function capture(format: 'text' | 'json', debug = false): string[] {
  const lines: string[] = [];
  configureLogging({ format, debug }, (l) => lines.push(l));
  return lines;
}

afterEach(() => configureLogging({ format: 'text', debug: false }));

describe('text lines', () => {
  it('read like the old messages: component, a level tag above info, then the fields the message does not name', () => {
    expect(textLine('info', 'cli', 'no --input given', {})).toBe('reasoning-jury: no --input given\n');
    expect(textLine('warn', 'kafka', 'offset commit deferred', { endpoint: 'b1:9092', unit: 't+0' })).toBe('reasoning-jury: kafka: warn: offset commit deferred (endpoint=b1:9092, unit=t+0)\n');
    // The message already says t+0 and the range; only the record id is added.
    expect(textLine('info', 'stage', 'range 0..9 of t+0 not written', { range: '0..9', unit: 't+0', record_id: 'r 1' })).toBe('reasoning-jury: stage: range 0..9 of t+0 not written (record_id="r 1")\n');
    // "0" is not taken as named by "HTTP 401".
    expect(textLine('warn', 'stage', 'no verdict: HTTP 401', { offset: 0 })).toBe('reasoning-jury: stage: warn: no verdict: HTTP 401 (offset=0)\n');
  });

  it('a fatal line carries its hint after the fields; a stack, when given, on the lines after', () => {
    expect(textLine('fatal', 'cli', 'ENOSPC: no space left on device, write', { path: '/o/x', hint: 'free space' })).toBe('reasoning-jury: ENOSPC: no space left on device, write (path=/o/x); free space\n');
    expect(textLine('fatal', 'cli', 'boom', { stack: 'Error: boom\n    at f (x.js:1:1)' })).toBe('reasoning-jury: boom\nError: boom\n    at f (x.js:1:1)\n');
  });

  it('debug events only with debug on', () => {
    const quiet = capture('text');
    logger('stage').debug('hidden');
    logger('stage').info('shown');
    expect(quiet).toEqual(['reasoning-jury: stage: shown\n']);
    const loud = capture('text', true);
    logger('stage').debug('now shown');
    expect(loud).toEqual(['reasoning-jury: stage: debug: now shown\n']);
    expect(logger('x').enabled('debug')).toBe(true);
  });
});

describe('json lines', () => {
  it('one object a line: time, named level, component, msg and the fields', () => {
    const lines = capture('json');
    logger('kafka').child('Connection').error('Connection error: connect ECONNREFUSED 127.0.0.1:1', { endpoint: '127.0.0.1:1', skipped: undefined });
    logger('stage').info('range 0..9 not written', { range: '0..9', unit: 'f.jsonl' });
    expect(lines).toHaveLength(2);
    const [a, b] = lines.map((l) => {
      expect(l.endsWith('\n')).toBe(true);
      expect(l.trimEnd()).not.toContain('\n');
      return JSON.parse(l) as Record<string, unknown>;
    });
    expect(a).toEqual({ time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), level: 'error', component: 'kafka.Connection', msg: 'Connection error: connect ECONNREFUSED 127.0.0.1:1', endpoint: '127.0.0.1:1' });
    expect(b).toMatchObject({ level: 'info', component: 'stage', range: '0..9', unit: 'f.jsonl' });
  });
});

describe('redaction', () => {
  it('secrets from the environment and added ones are replaced in messages and fields, in both formats', () => {
    process.env.RJ_UNIT_SENTINEL_TOKEN = 'sk-sentinel-unit-9a8b7c6d';
    try {
      for (const format of ['text', 'json'] as const) {
        const lines = capture(format);
        addLogSecrets(['plainly-named-value-1234']);
        logger('llm').warn('401 for key sk-sentinel-unit-9a8b7c6d', { body: { echoed: 'sk-sentinel-unit-9a8b7c6d' }, other: 'plainly-named-value-1234', auth: 'Bearer abcdef123456' });
        const text = lines.join('');
        expect(text).toContain('[REDACTED]');
        expect(text).not.toContain('sk-sentinel-unit');
        expect(text).not.toContain('plainly-named-value');
        expect(text).not.toContain('abcdef123456');
      }
    } finally {
      delete process.env.RJ_UNIT_SENTINEL_TOKEN;
    }
  });

  it('lineLogger writes text lines to a function, every level', () => {
    const lines: string[] = [];
    lineLogger((l) => lines.push(l), 'kafka').debug('assigned t+0');
    expect(lines).toEqual(['reasoning-jury: kafka: debug: assigned t+0\n']);
  });
});
