import { describe, expect, it } from 'vitest';
import { MessageBuffer } from '../../connectors/kafka/buffer.js';
import { parseRangeKey } from '../../connectors/kafka/manifests.js';
import { drainState, intake, newPart, startAt } from '../../connectors/kafka/partition.js';
import { CoveredOffsets } from '../../connectors/kafka/offsets.js';
import { parseKafkaUrl } from '../../connectors/kafka/options.js';
import { parseS3Url } from '../../connectors/s3/client.js';
import { shardObjects, resumeRow } from '../../connectors/s3/parquet-source.js';
import { manifestKey } from '../../src/pipeline/commit/layout.js';
import { positionString } from '../../src/pipeline/positions.js';

describe('CoveredOffsets: the commit point never passes an uncommitted offset', () => {
  it('moves only when the gap below it closes, whatever the commit order', () => {
    const c = new CoveredOffsets(100);
    c.add(200, 299);
    expect(c.next).toBe(100);
    c.add(300, 399);
    expect(c.next).toBe(100);
    c.add(100, 199);
    expect(c.next).toBe(400);
    expect(c.pending).toEqual([]);
  });

  it('merges adjacent and overlapping spans and ignores what is already behind', () => {
    const c = new CoveredOffsets(0);
    c.add(10, 19);
    c.add(20, 24); // adjacent
    c.add(15, 30); // overlapping
    expect(c.pending).toEqual([[10, 30]]);
    expect(c.has(9)).toBe(false);
    expect(c.has(25)).toBe(true);
    c.add(0, 9);
    expect(c.next).toBe(31);
    c.add(3, 7); // behind the point: no change
    expect(c.next).toBe(31);
    expect(c.has(5)).toBe(true);
  });

  it('a span reaching back before the point still advances it', () => {
    const c = new CoveredOffsets(50);
    c.add(40, 60);
    expect(c.next).toBe(61);
  });
});

describe('names and URLs', () => {
  it('parses the offsets out of a Kafka manifest key, topics with dots and dashes included', () => {
    const unit = 'rj.traces-v2+3';
    const key = manifestKey(positionString(unit, 42, 'kafka'), positionString(unit, 1041, 'kafka'));
    expect(parseRangeKey(key, unit)).toEqual({ first: 42, last: 1041, key });
    expect(parseRangeKey(key, 'rj.traces-v2+31')).toBeNull();
    expect(parseRangeKey('_commits/rj.traces-v2+3+12-x.json', unit)).toBeNull();
  });

  it('kafka:// and s3:// URLs', () => {
    expect(parseKafkaUrl('kafka://a,b.c?group=g1')).toEqual({ topics: ['a', 'b.c'], group: 'g1' });
    expect(() => parseKafkaUrl('kafka://a+b')).toThrow(/invalid Kafka topic/);
    expect(() => parseKafkaUrl('kafka://a?grp=1')).toThrow(/unknown parameter "grp"/);
    expect(parseS3Url('s3://my-bucket/some/prefix/')).toEqual({ bucket: 'my-bucket', prefix: 'some/prefix' });
    expect(parseS3Url('s3://my-bucket')).toEqual({ bucket: 'my-bucket', prefix: '' });
    expect(() => parseS3Url('s3://My_Bucket/x')).toThrow(/valid bucket name/);
    expect(() => parseS3Url('s3://bucket/a/../b')).toThrow(/segments/);
  });

  it('rank/world_size sharding gives every object to exactly one worker', () => {
    const objects = Array.from({ length: 11 }, (_, i) => `o${i}`);
    const shares = [0, 1, 2].map((r) => shardObjects(objects, r, 3));
    expect(shares.flat().sort()).toEqual([...objects].sort());
    expect(shares.map((s) => s.length)).toEqual([4, 4, 3]);
    expect(() => shardObjects(objects, 3, 3)).toThrow(/rank/);
  });

  it('resume row follows the chain of committed ranges from row 0 only', () => {
    const committed = new Map([['tok', new Map([[0, 99], [100, 249], [400, 499]])]]);
    expect(resumeRow(committed, 'tok')).toBe(250);
    expect(resumeRow(committed, 'other')).toBe(0);
  });
});

describe('partition intake: what a fetched batch means for the commit point', () => {
  const msg = (offset: number) => ({ offset, key: null, value: Buffer.from('{}'), headers: {}, timestamp: 0 });
  const batch = (fetchedOffset: number, offsets: number[], highWatermark = 100) => ({ topic: 't', partition: 0, fetchedOffset, highWatermark, messages: offsets.map(msg) });

  it('offsets the fetch skipped (markers, compaction) are covered; committed ones are not handed out', () => {
    const part = newPart({ topic: 't', partition: 0 });
    startAt(part, 10, [{ first: 14, last: 15 }]); // an earlier owner committed 14..15
    const r = intake(part, batch(10, [10, 11, 13, 14, 15, 16])); // 12: a transaction marker
    expect(r.fresh.map((m) => m.offset)).toEqual([10, 11, 13, 16]);
    expect(r.committed).toBe(2);
    expect(part.covered!.next).toBe(10); // nothing of ours committed yet
    part.covered!.add(10, 11);
    expect(part.covered!.next).toBe(13); // 12 held no message
    // A fetch resuming past what we asked for skipped only invisible offsets.
    const r2 = intake(part, batch(20, [20]));
    expect(r2.fresh.map((m) => m.offset)).toEqual([20]);
    part.covered!.add(13, 13);
    part.covered!.add(16, 16);
    expect(part.covered!.next).toBe(20);
  });

  it('re-delivered messages (after a rebalance the fetch restarts at the committed offset) are dropped', () => {
    const part = newPart({ topic: 't', partition: 0 });
    startAt(part, 0, []);
    intake(part, batch(0, [0, 1, 2, 3]));
    expect(intake(part, batch(0, [0, 1, 2, 3, 4])).fresh.map((m) => m.offset)).toEqual([4]);
  });

  it('drainState: reading, waiting for the other members, done', () => {
    const mine = newPart({ topic: 't', partition: 0 });
    startAt(mine, 0, []);
    intake(mine, batch(0, [0, 1, 2], 3));
    const parts = new Map([[mine.unit, mine]]);
    const o = (partition: number, committed: number, high: number) => ({ topic: 't', partition, committed, low: 0, high });
    expect(drainState(parts, [o(0, 0, 5), o(1, 9, 9)])).toBe('reading');
    expect(drainState(parts, [o(0, 0, 3), o(1, 4, 9)])).toBe('others');
    expect(drainState(parts, [o(0, 0, 3), o(1, 9, 9), o(2, -1, 0)])).toBe('done');
  });

  it('the buffer counts messages and bytes, and drops a revoked partition\'s entries', () => {
    const buf = new MessageBuffer<string>({ messages: 4, bytes: 1 << 20 });
    for (const p of ['a', 'b', 'a', 'b']) buf.push(p, msg(1));
    expect(buf.full).toBe(true);
    expect(buf.removePart('a')).toBe(2);
    expect(buf.size).toBe(2);
    expect(buf.drained).toBe(true);
    expect(buf.shift()!.part).toBe('b');
    expect(buf.maxSize).toBe(4);
  });

  it('the buffer takes partitions in turn, each in offset order, a newcomer after those waiting', () => {
    const buf = new MessageBuffer<string>({ messages: 100, bytes: 1 << 20 });
    const at = (p: string, offset: number) => buf.push(p, msg(offset));
    // One fetch: partition a's whole batch, then b's, then c's.
    for (const o of [0, 1, 2, 3]) at('a', o);
    for (const o of [10, 11]) at('b', o);
    at('c', 20);
    const take = (n: number) =>
      Array.from({ length: n }, () => {
        const e = buf.shift()!;
        return `${e.part}${e.msg.offset}`;
      });
    expect(take(4)).toEqual(['a0', 'b10', 'c20', 'a1']);
    at('d', 30); // joins while b is next: served after b and a
    at('c', 21); // c is back too, after d
    expect(take(5)).toEqual(['b11', 'a2', 'd30', 'c21', 'a3']);
    expect(buf.size).toBe(0);
    expect(buf.shift()).toBeUndefined();
    expect(buf.bytes).toBe(0);
  });

  it('removing a partition keeps the turn of the others', () => {
    const buf = new MessageBuffer<string>({ messages: 100, bytes: 1 << 20 });
    for (const p of ['a', 'b', 'c', 'a', 'b', 'c']) buf.push(p, msg(0));
    expect(buf.shift()!.part).toBe('a');
    expect(buf.removePart('a')).toBe(1);
    expect([buf.shift()!.part, buf.shift()!.part, buf.shift()!.part, buf.shift()!.part]).toEqual(['b', 'c', 'b', 'c']);
    expect(buf.size).toBe(0);
  });
});
