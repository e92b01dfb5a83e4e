// The Kafka source's own pause bookkeeping, against a stand-in for OUR consumer port (not
// kafkajs): the stand-in keeps pause state per partition across assignments, as kafkajs does,
// and each test ends asking whether a partition that should be read is left paused. The three
// paths are the ways churn runs stranded partitions (issue 42): a pause that outlives a
// revocation, and a buffer emptied by a revocation or a reset while fetching was paused for it.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FetchWatchdog } from '../../connectors/kafka/fetch-watchdog.js';
import { newPart, startAt, unitOf } from '../../connectors/kafka/partition.js';
import type { ConsumerHandlers, InBatch, KafkaConsumerPort, PartitionOffsets, TopicPartition } from '../../connectors/kafka/port.js';
import { KafkaSource } from '../../connectors/kafka/source.js';
import { manifestKey } from '../../src/pipeline/commit/layout.js';
import { LocalObjectStore } from '../../src/pipeline/storage/object-store.js';
import { positionString } from '../../src/pipeline/positions.js';
import { lineLogger } from '../../src/util/log.js';
import { tempDir } from '../helpers/run-setup.js';

const T = 't';
const tp = (partition: number): TopicPartition => ({ topic: T, partition });

/** The port, with the one behaviour that matters here: pauses are kept per partition for good. */
class PortStandIn implements KafkaConsumerPort {
  handlers!: ConsumerHandlers;
  readonly paused = new Set<string>();
  readonly seeks: string[] = [];
  offsetsAnswer: PartitionOffsets[] = [];
  async start(h: ConsumerHandlers): Promise<void> {
    this.handlers = h;
  }
  pause(tps: TopicPartition[]): void {
    for (const x of tps) this.paused.add(unitOf(x));
  }
  resume(tps: TopicPartition[]): void {
    for (const x of tps) this.paused.delete(unitOf(x));
  }
  seek(x: TopicPartition, offset: number): void {
    this.seeks.push(`${unitOf(x)}@${offset}`);
  }
  async commit(): Promise<void> {}
  async offsets(): Promise<PartitionOffsets[]> {
    return this.offsetsAnswer;
  }
  /** a client that never finishes leaving the group */
  stopHangs = false;
  async stop(): Promise<void> {
    if (this.stopHangs) await new Promise(() => undefined);
  }
}

const batch = (partition: number, from: number, n: number): InBatch => ({
  topic: T,
  partition,
  fetchedOffset: from,
  highWatermark: from + n,
  messages: Array.from({ length: n }, (_, i) => ({ offset: from + i, key: null, value: Buffer.from(`{"id":"r${partition}-${from + i}","problem":"p","trace":"x"}`), headers: {}, timestamp: 0 })),
});

/** A source whose buffer is full at 4 messages (and drained at 2). */
async function setup(): Promise<{ port: PortStandIn; source: KafkaSource; store: LocalObjectStore; next: () => Promise<unknown> }> {
  const port = new PortStandIn();
  const store = new LocalObjectStore(tempDir('pause-state'));
  const source = new KafkaSource({ consumer: port, topics: [T], store, maxBufferedMessages: 4, maxBufferedBytes: 1 << 30, flushIdleMs: 0, maxMessageBytes: 1 << 20, log: lineLogger(() => undefined) });
  await source.start();
  const it = source[Symbol.asyncIterator]();
  return { port, source, store, next: () => it.next() };
}

/** Assigned partitions the client would not fetch. */
const strandedOf = (port: PortStandIn, assigned: TopicPartition[]) => assigned.map(unitOf).filter((u) => port.paused.has(u));

describe('Kafka source pause state across assignments', () => {
  it('a partition revoked while paused and assigned again later is fetched', async () => {
    const { port, source, next } = await setup();
    port.handlers.onAssigned([tp(0), tp(1)]);
    await port.handlers.onBatch(batch(0, 0, 4)); // full: both partitions paused
    expect(strandedOf(port, [tp(0), tp(1)])).toEqual([`${T}+0`, `${T}+1`]);
    port.handlers.onRebalancing();
    port.handlers.onAssigned([tp(0)]); // 1 goes while paused; 0's messages keep the buffer full
    for (let i = 0; i < 3; i++) await next(); // drained to half: fetching resumes
    port.handlers.onRebalancing();
    port.handlers.onAssigned([tp(0), tp(1)]);
    expect(strandedOf(port, [tp(0), tp(1)])).toEqual([]);
    await source.close();
  });

  it('a revocation that empties the buffer while fetching is paused resumes fetching', async () => {
    const { port, source } = await setup();
    port.handlers.onAssigned([tp(0)]);
    await port.handlers.onBatch(batch(0, 0, 6));
    expect(source.stats.paused).toBe(true);
    port.handlers.onRebalancing();
    port.handlers.onAssigned([tp(1)]); // 0's six buffered messages go with it
    expect(source.stats.buffered).toBe(0);
    expect(strandedOf(port, [tp(1)])).toEqual([]);
    expect(source.stats.paused).toBe(false);
    await source.close();
  });

  it('a reset that empties the buffer while fetching is paused resumes fetching', async () => {
    const { port, source, store, next } = await setup();
    port.handlers.onAssigned([tp(0)]);
    await port.handlers.onBatch(batch(0, 0, 6));
    await next(); // offset 0 is in a range of ours; five wait, still above half
    // Another writer's manifest over offsets 0..1 turns up: our range [0..0] conflicts with it.
    const unit = `${T}+0`;
    const key = manifestKey(positionString(unit, 0, 'kafka'), positionString(unit, 1, 'kafka'));
    mkdirSync(join(store.root, '_commits'), { recursive: true });
    writeFileSync(store.locate(key), '{}');
    const claim = { unit, unitToken: unit, firstOffset: 0, lastOffset: 0, offsets: [0] };
    expect((await source.clearance(claim)).write).toBe(false);
    source.rangeDone({ ...claim, first: positionString(unit, 0, 'kafka'), last: positionString(unit, 0, 'kafka'), records: 1, outcome: 'conflicted' });
    expect(source.stats.resets).toBe(1);
    expect(source.stats.buffered).toBe(0);
    expect(port.seeks).toEqual([`${unit}@0`]);
    expect(strandedOf(port, [tp(0)])).toEqual([]);
    await source.close();
  });

  it('states pause or resume for every partition of each assignment, and ends paused', async () => {
    const { port, source } = await setup();
    port.paused.add(`${T}+2`); // a pause the client remembers from long ago
    port.handlers.onAssigned([tp(2), tp(3)]);
    expect(strandedOf(port, [tp(2), tp(3)])).toEqual([]);
    source.hold(true);
    expect(strandedOf(port, [tp(2), tp(3)])).toEqual([`${T}+2`, `${T}+3`]);
    port.handlers.onAssigned([tp(3), tp(4)]); // held: the new assignment is paused too, and 2 is let go
    expect(strandedOf(port, [tp(3), tp(4)])).toEqual([`${T}+3`, `${T}+4`]);
    expect(port.paused.has(`${T}+2`)).toBe(false);
    source.hold(false);
    expect(strandedOf(port, [tp(3), tp(4)])).toEqual([]);
    await source.close();
    expect(strandedOf(port, [tp(3), tp(4)])).toEqual([`${T}+3`, `${T}+4`]);
  });
});

describe('fetch watchdog', () => {
  it('reports a quiet partition with records to read in one line and resumes it; a caught-up one is left alone', async () => {
    const port = new PortStandIn();
    const lines: string[] = [];
    const stuck = newPart(tp(0));
    startAt(stuck, 40, []);
    const idle = newPart(tp(1));
    startAt(idle, 10, []);
    port.paused.add(unitOf(stuck.tp));
    port.offsetsAnswer = [
      { topic: T, partition: 0, committed: 40, low: 0, high: 90 },
      { topic: T, partition: 1, committed: 10, low: 0, high: 10 },
    ];
    let counted = 0;
    const dog = new FetchWatchdog({ consumer: port, topics: [T], stallMs: 30_000, parts: () => [stuck, idle], still: () => true, onStuck: (n) => (counted += n), log: () => lineLogger((l) => lines.push(l), 'kafka') });
    dog.fetchingFrom(0);
    const t0 = Math.max(stuck.lastBatchAt, idle.lastBatchAt);
    expect(await dog.check(t0 + 1000)).toEqual([]); // not quiet for long enough yet
    expect(await dog.check(t0 + 31_000)).toEqual([stuck]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^reasoning-jury: kafka: warn: assigned here with records to read but not fetched for 30 s: t\+0 \(at 40, log end 90\); resuming fetching\n$/);
    expect(port.paused.has('t+0')).toBe(false);
    expect(port.seeks).toEqual(['t+0@40']);
    expect(counted).toBe(1);
    // Reported once per stall window, not on every round.
    expect(await dog.check(t0 + 32_000)).toEqual([]);
  });
});

describe('closing', () => {
  it('a client that never finishes leaving the group does not hold close: one warning, then on', async () => {
    const port = new PortStandIn();
    port.stopHangs = true;
    const lines: string[] = [];
    const source = new KafkaSource({ consumer: port, topics: [T], store: new LocalObjectStore(tempDir('close-hang')), maxBufferedMessages: 4, maxBufferedBytes: 1 << 30, flushIdleMs: 0, maxMessageBytes: 1 << 20, stopTimeoutMs: 50, log: lineLogger((l) => lines.push(l)) });
    await source.start();
    port.handlers.onAssigned([tp(0)]);
    await source.close();
    expect(lines.filter((l) => l.includes('did not finish leaving the group'))).toHaveLength(1);
  });
});
