import { describe, expect, it } from 'vitest';
import { describeError } from '../../src/util/error-report.js';

/** What fs gives on a full disk: a system error with code, syscall and (often) no path. */
function enospc(): NodeJS.ErrnoException {
  return Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
}

describe('describeError', () => {
  it('never says "Error: Error:" for an error re-wrapped from its stack or string', () => {
    const inner = enospc();
    const rewrapped = new Error(String(inner)); // message "Error: ENOSPC: ..."
    const r = describeError(new Error(`Error: ${rewrapped.message}`));
    expect(r.message).toBe('ENOSPC: no space left on device, write');
  });

  it('unwraps a cause chain into one line, saying a repeated text once, and keeps the fields that say what failed', () => {
    class StorageError extends Error {
      constructor(
        message: string,
        readonly store: string,
        readonly op: string,
        readonly key: string,
        readonly range: string,
        options: { cause: unknown },
      ) {
        super(message, options);
      }
    }
    const err = new StorageError('cannot write range 0..99', 'local', 'put', 'out/verdicts/part-0.parquet', '0..99', { cause: new Error('write failed: ENOSPC: no space left on device, write', { cause: enospc() }) });
    const r = describeError(err);
    expect(r.message).toBe('cannot write range 0..99: write failed: ENOSPC: no space left on device, write');
    expect(r.message).not.toContain('\n');
    expect(r.fields).toEqual({ store: 'local', op: 'put', key: 'out/verdicts/part-0.parquet', range: '0..99', syscall: 'write', code: 'ENOSPC' });
    expect(r.hint).toMatch(/free space .* run the same command again/);
    expect(r.stack).toMatch(/StorageError|cannot write range[\s\S]*caused by: /);
  });

  it('a hint the error brings wins over the one for its code', () => {
    const outage = Object.assign(new Error('endpoint "vllm" down for 30 min (max outage)', { cause: Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:8000'), { code: 'ECONNREFUSED', address: '10.0.0.5', port: 8000 }) }), {
      endpoint: 'vllm',
      hint: 'bring the model server back, then run the same command again',
    });
    const r = describeError(outage);
    expect(r.message).toBe('endpoint "vllm" down for 30 min (max outage): connect ECONNREFUSED 10.0.0.5:8000');
    expect(r.fields).toMatchObject({ endpoint: 'vllm', code: 'ECONNREFUSED', address: '10.0.0.5', port: 8000 });
    expect(r.hint).toBe('bring the model server back, then run the same command again');
  });

  it('an AggregateError with no message (happy eyeballs) reads as its first error', () => {
    const agg = Object.assign(new AggregateError([Object.assign(new Error('connect ECONNREFUSED ::1:9000'), { code: 'ECONNREFUSED' }), new Error('connect ECONNREFUSED 127.0.0.1:9000')], ''), { code: 'ECONNREFUSED' });
    const r = describeError(new Error('S3 put failed', { cause: agg }));
    expect(r.message).toBe('S3 put failed: connect ECONNREFUSED ::1:9000');
    expect(r.hint).toMatch(/service is up/);
  });

  it('copes with cycles, non-errors and empty messages', () => {
    const a = new Error('a') as Error & { cause?: unknown };
    a.cause = a;
    expect(describeError(a).message).toBe('a');
    expect(describeError('plain text').message).toBe('plain text');
    expect(describeError(Object.assign(new Error(''), { code: 'EPIPE' })).message).toBe('EPIPE');
    expect(describeError(undefined).message).toBe('unknown error');
  });
});
