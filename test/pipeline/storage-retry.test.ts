// The storage outage policy with an injected clock: backoff, one shared outage, give-up time,
// what is retried and what is not, and the lines an operator sees.
import { ListObjectsV2Command, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { isTransientS3Error } from '../../connectors/s3/client.js';
import { isTransientFsError } from '../../src/pipeline/storage/object-store.js';
import { freePort } from '../s3/private-server.js';
import { ObjectExistsError } from '../../src/pipeline/storage/object-store.js';
import { causeText, StorageError } from '../../src/pipeline/storage/storage-error.js';
import { storageBackoff, StorageRetry, type StorageAttempt } from '../../src/pipeline/storage/storage-retry.js';

const errno = (code: string, message: string) => Object.assign(new Error(message), { code });
const refused = () => errno('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:39000');
const attempt: StorageAttempt = {
  op: 'write',
  key: '_commits/a-b.json',
  location: 's3://bkt/out/_commits/a-b.json',
  transient: (e) => (e as { code?: string }).code === 'ECONNREFUSED' || (e as { code?: string }).code === 'ENOSPC',
  passThrough: (e) => e instanceof ObjectExistsError,
};

/** A clock that only moves when the policy sleeps. */
function fakeTime(maxOutageMs: number, extra: { signal?: AbortSignal; reportEveryMs?: number } = {}) {
  let t = 1_000_000;
  const sleeps: number[] = [];
  const lines: string[] = [];
  const retry = new StorageRetry({
    maxOutageMs,
    store: 's3://bkt/out',
    setting: '--max-storage-outage',
    now: () => t,
    sleep: async (ms, signal) => {
      if (signal?.aborted) throw new Error('aborted');
      sleeps.push(ms);
      t += ms;
      await Promise.resolve();
      if (signal?.aborted) throw new Error('aborted');
    },
    random: () => 1,
    log: (l) => lines.push(l),
    ...extra,
  });
  return { retry, sleeps, lines, advance: (ms: number) => void (t += ms) };
}

/** fn failing with `err` for the first `n` calls, then answering 'ok'. */
function failing(n: number, err: () => unknown = refused) {
  let calls = 0;
  const fn = async () => {
    calls += 1;
    if (calls <= n) throw err();
    return 'ok';
  };
  return { fn, calls: () => calls };
}

describe('storage backoff', () => {
  it('doubles from the base up to the cap, half of it jittered', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((r) => storageBackoff(r, 250, 5000, () => 1))).toEqual([250, 500, 1000, 2000, 4000, 5000, 5000]);
    expect([1, 2, 3].map((r) => storageBackoff(r, 250, 5000, () => 0))).toEqual([125, 250, 500]);
  });
});

describe('StorageRetry', () => {
  it('waits out a short outage: one line when it starts, one when the store is back, intake held meanwhile', async () => {
    const { retry, sleeps, lines } = fakeTime(600_000);
    expect(retry.blocked()).toBeNull();
    const op = failing(3);
    let held: Promise<void> | null = null;
    let released = false;
    const result = retry.run(attempt, async () => {
      if (op.calls() === 1) {
        held = retry.blocked(); // the first failure has begun an outage by the second call
        void held?.then(() => (released = true));
      }
      return op.fn();
    });
    await expect(result).resolves.toBe('ok');
    expect(op.calls()).toBe(4);
    expect(sleeps).toEqual([250, 500, 1000]);
    expect(held).not.toBeNull();
    await Promise.resolve();
    expect(released).toBe(true);
    expect(retry.blocked()).toBeNull();
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe('storage unavailable: could not write s3://bkt/out/_commits/a-b.json: connect ECONNREFUSED 127.0.0.1:39000; holding intake and retrying for up to 10m (--max-storage-outage)');
    expect(lines[1]).toBe('storage available again after 2s; resuming intake');
    expect(retry.stats).toEqual({ outages: 1, outageMs: 1750 });
  });

  it('gives up when the outage reaches the maximum, exactly then, with a typed one-line error', async () => {
    const { retry, sleeps } = fakeTime(30_000);
    const op = failing(Infinity);
    const err = await retry.run(attempt, op.fn).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageError);
    const f = (err as StorageError).failure;
    expect(f).toMatchObject({ op: 'write', key: '_commits/a-b.json', location: 's3://bkt/out/_commits/a-b.json', store: 's3://bkt/out', code: 'ECONNREFUSED', why: 'gave-up', waitedMs: 30_000 });
    expect(sleeps.reduce((a, b) => a + b, 0)).toBe(30_000);
    expect(Math.max(...sleeps)).toBe(5000); // capped
    const message = (err as Error).message;
    expect(message).not.toContain('\n');
    expect(message).not.toMatch(/Error:/);
    expect(message).toBe(
      'storage unavailable for 30s, giving up: could not write s3://bkt/out/_commits/a-b.json: connect ECONNREFUSED 127.0.0.1:39000. Run the same command again once s3://bkt/out is reachable: committed ranges are kept and not judged again',
    );
    // The range commit puts its range into the line.
    expect((err as StorageError).inRange('a..b').message).toContain('(range a..b)');
    expect((err as StorageError).inRange('a..b').message).toContain('the range is not committed');
    // Once given up, nothing waits again: the stage is stopping.
    const late = failing(1);
    await expect(retry.run(attempt, late.fn)).rejects.toMatchObject({ failure: { why: 'gave-up' } });
    expect(late.calls()).toBe(1);
  });

  it('does not retry causes that are not outages, nor answers such as ObjectExistsError', async () => {
    const { retry, sleeps, lines } = fakeTime(600_000);
    const denied = failing(1, () => Object.assign(new Error('Access Denied'), { name: 'AccessDenied', $metadata: { httpStatusCode: 403 } }));
    const err = await retry.run(attempt, denied.fn).catch((e: unknown) => e);
    expect(err).toMatchObject({ failure: { why: 'not-retryable', code: 'AccessDenied', detail: 'AccessDenied (403): Access Denied', waitedMs: 0 } });
    expect((err as Error).message).toContain('Fix access to s3://bkt/out, then run the same command again');
    const exists = failing(1, () => new ObjectExistsError('_commits/a-b.json'));
    await expect(retry.run(attempt, exists.fn)).rejects.toBeInstanceOf(ObjectExistsError);
    expect(denied.calls() + exists.calls()).toBe(2);
    expect(sleeps).toEqual([]);
    expect(lines).toEqual([]);
  });

  it('shares one outage among operations failing together: one line, one deadline', async () => {
    const { retry, lines } = fakeTime(20_000);
    const a = failing(Infinity);
    const b = failing(Infinity);
    const results = await Promise.allSettled([retry.run(attempt, a.fn), retry.run({ ...attempt, key: 'verdicts/x.parquet', location: 's3://bkt/out/verdicts/x.parquet' }, b.fn)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(lines.filter((l) => l.includes('storage unavailable:'))).toHaveLength(1);
    for (const r of results) expect((r as PromiseRejectedResult).reason).toMatchObject({ failure: { why: 'gave-up' } });
  });

  it('with a maximum of 0 fails at the first failure, without a waiting line', async () => {
    const { retry, sleeps, lines } = fakeTime(0);
    const err = (await retry.run(attempt, failing(Infinity).fn).catch((e: unknown) => e)) as StorageError;
    expect(err.message).toMatch(/^storage unavailable, giving up: could not write s3:\/\/bkt\/out\/_commits\/a-b.json: connect ECONNREFUSED/);
    expect(sleeps).toEqual([]);
    expect(lines).toEqual([]);
  });

  it('says again that it is still waiting, once a minute by default', async () => {
    const { retry, lines } = fakeTime(150_000);
    await retry.run(attempt, failing(Infinity).fn).catch(() => undefined);
    expect(lines.filter((l) => l.includes('storage still unavailable'))).toHaveLength(2);
  });

  it('stops waiting when the run is asked to stop', async () => {
    const stop = new AbortController();
    const { retry } = fakeTime(600_000, { signal: stop.signal });
    const op = failing(Infinity);
    const run = retry.run(attempt, async () => {
      if (op.calls() === 2) stop.abort();
      return op.fn();
    });
    const err = await run.catch((e: unknown) => e);
    expect(err).toMatchObject({ failure: { why: 'stopped' } });
    expect((err as Error).message).toMatch(/^stopped while waiting \d+s for storage: could not write/);
    expect(op.calls()).toBeLessThanOrEqual(3);
  });

  it('a full disk: the line names the path and asks for free space', async () => {
    const { retry } = fakeTime(1000);
    const full = failing(Infinity, () => errno('ENOSPC', 'ENOSPC: no space left on device, write'));
    const err = (await retry.run({ ...attempt, location: '/mnt/out/_commits/a-b.json' }, full.fn).catch((e: unknown) => e)) as StorageError;
    expect(err.code).toBe('ENOSPC');
    expect(err.message).toContain('could not write /mnt/out/_commits/a-b.json: ENOSPC: no space left on device, write');
    expect(err.message).toContain('once s3://bkt/out has free space');
  });
});

describe('causeText', () => {
  it('is one line without Error: prefixes, from Node, AggregateError and SDK errors', () => {
    expect(causeText(new Error('Error: ENOSPC: no space left on device, write\n    at x'))).toBe('ENOSPC: no space left on device, write');
    const agg = Object.assign(new AggregateError([refused(), refused()], ''), { code: 'ECONNREFUSED' });
    expect(causeText(agg)).toBe('connect ECONNREFUSED 127.0.0.1:39000');
    expect(causeText(Object.assign(new Error('Please reduce your request rate.'), { name: 'SlowDown', $metadata: { httpStatusCode: 503 } }))).toBe('SlowDown (503): Please reduce your request rate.');
  });
});

describe('what counts as an outage', () => {
  it('S3: a refused connection (a real SDK error), 5xx and throttling; not 4xx answers', async () => {
    const client = new S3Client({ endpoint: `http://127.0.0.1:${await freePort()}`, region: 'us-east-1', forcePathStyle: true, maxAttempts: 1, credentials: { accessKeyId: 'x', secretAccessKey: 'y' } });
    const err = await client.send(new ListObjectsV2Command({ Bucket: 'nobody' })).catch((e: unknown) => e);
    client.destroy();
    expect(isTransientS3Error(err)).toBe(true);
    expect(causeText(err)).toMatch(/ECONNREFUSED/);
    expect(causeText(err)).not.toMatch(/Error:/);
    const answer = (name: string, status: number) => new S3ServiceException({ name, $fault: status >= 500 ? 'server' : 'client', $metadata: { httpStatusCode: status }, message: name });
    expect(isTransientS3Error(answer('InternalError', 500))).toBe(true);
    expect(isTransientS3Error(answer('SlowDown', 503))).toBe(true);
    expect(isTransientS3Error(answer('TooManyRequests', 429))).toBe(true);
    expect(isTransientS3Error(answer('AccessDenied', 403))).toBe(false);
    expect(isTransientS3Error(answer('NoSuchBucket', 404))).toBe(false);
    expect(isTransientS3Error(answer('PreconditionFailed', 412))).toBe(false);
  });

  it('local: a full disk, quota, I/O errors; not access denied or a read-only file system', () => {
    for (const code of ['ENOSPC', 'EDQUOT', 'EIO', 'EMFILE']) expect(isTransientFsError(errno(code, code))).toBe(true);
    for (const code of ['EACCES', 'EPERM', 'EROFS', 'ENOENT']) expect(isTransientFsError(errno(code, code))).toBe(false);
  });
});
