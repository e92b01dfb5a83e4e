// Races between a former partition owner and the current one, on the real S3 server and broker:
// the range commit's outcomes, and the source re-reading a partition when another writer's range
// turns up overlapping its own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kafkaClearance, type PartitionOwner } from '../../connectors/kafka/clearance.js';
import { createKafkajs, KafkajsConsumer } from '../../connectors/kafka/kafkajs-client.js';
import { lineLogger } from '../../src/util/log.js';
import { KafkaConfig } from '../../schemas/kafka.js';
import { KafkaSource } from '../../connectors/kafka/source.js';
import { createS3Client } from '../../connectors/s3/client.js';
import { S3ObjectStore } from '../../connectors/s3/object-store.js';
import type { DeadLetterRow } from '../../schemas/outputs.js';
import { defaultConfigInput, parseConfig } from '../../src/config/load.js';
import { positionString } from '../../src/pipeline/positions.js';
import { ShardCommitter } from '../../src/pipeline/commit/shard-commit.js';
import { type CommitRequest } from '../../src/pipeline/sink.js';
import { manifestKey } from '../../src/pipeline/commit/layout.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { commitRange } from '../../src/pipeline/range-commit.js';
import { RangeWriter } from '../../src/pipeline/range-writer.js';
import type { RangeOutcome, Source } from '../../src/pipeline/source.js';
import { runStage } from '../../src/pipeline/stage.js';
import { intakeSettings, judgingSteps } from '../../src/pipeline/steps/index.js';
import { openRuntime } from '../../src/compose/runtime.js';
import { createSimProvider, defaultProfile, withoutFaults } from '../../src/sim/index.js';
import { kafkaFixture, offsetsBehindShards, type KafkaFixture } from './helpers/fixture.js';
import { createBucket, dropBucket, ensureServices, s3Client } from './helpers/services.js';

ensureServices();
const UNIT = 'topic-a+0';
const pos = (o: number) => positionString(UNIT, o, 'kafka');
const deadRow = (o: number, error = 'bad'): DeadLetterRow => ({ source: 'kafka', source_unit: UNIT, source_offset: o, error, raw: '', raw_truncated: false });
const request = (first: number, last: number, offsets: number[], error = 'bad'): CommitRequest => ({
  source: 'kafka',
  first: pos(first),
  last: pos(last),
  tables: { dead_letters: offsets.map((o) => deadRow(o, error)) },
  range: { unit: UNIT, unit_token: UNIT, first_offset: first, last_offset: last, records: offsets.length },
});
const span = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);

const SETTINGS = { max_records: 100, max_chars: 1 << 30, formats: ['parquet' as const] };

/** One Kafka range through the range commit, cleared by kafkaClearance as the source would. */
async function commitKafkaRange(store: S3ObjectStore, owner: PartitionOwner, req: CommitRequest, outcomes: RangeOutcome[]): Promise<void> {
  const r = req.range!;
  const w = new RangeWriter({ id: 0, unit: r.unit, unitToken: r.unit_token, firstOffset: r.first_offset, lastOffset: r.last_offset, items: r.records, chars: 0, closed: true }, 'kafka');
  for (const d of req.tables.dead_letters ?? []) w.add({ position: { source: 'kafka', unit: UNIT, offset: d.source_offset }, item: { position: { source: 'kafka', unit: UNIT, offset: d.source_offset }, ok: false, error: d.error, rawText: '', rawTextTruncated: false }, dead: d });
  w.close();
  const streaming = { attach: () => {}, clearance: (c: Parameters<typeof kafkaClearance>[2]) => kafkaClearance(store, owner, c), rangeDone: (rep: { outcome: RangeOutcome }) => outcomes.push(rep.outcome), safeOffsets: () => [], acknowledge: async () => {} };
  await commitRange(w, { committer: new ShardCommitter(store), source: { streaming } as unknown as Source, sinks: [], settings: SETTINGS, log: lineLogger(() => undefined) });
}

describe('range commit outcomes for Kafka ranges', () => {
  const s3 = s3Client();
  let bucket: string;
  let store: S3ObjectStore;
  const outcomes: RangeOutcome[] = [];
  let owned = true;
  const owner: PartitionOwner = { mayWrite: async () => owned, floor: () => 0 };

  beforeAll(async () => {
    bucket = await createBucket(s3, 'commit');
    store = new S3ObjectStore(createS3Client({}), { bucket, prefix: 'out' });
  });
  afterAll(async () => {
    await dropBucket(s3, bucket);
    s3.destroy();
  });

  it('written, then existing for the same range; skipped when not owned; conflict only when records are shared', async () => {
    const c = { commit: (req: CommitRequest) => commitKafkaRange(store, owner, req, outcomes) };
    await c.commit(request(0, 9, span(0, 9)));
    await c.commit(request(0, 9, span(0, 9), 'rebuilt'));
    owned = false;
    await c.commit(request(10, 19, span(10, 19)));
    owned = true;
    // A former owner's partial range [10..14] lands; our [10..19] shares records with it.
    await new ShardCommitter(store).commit(request(10, 14, span(10, 14), 'former owner'));
    await c.commit(request(10, 19, span(10, 19)));
    // [15..30] spans nothing committed; [31..60] spans [40..44] but skipped its records.
    await c.commit(request(15, 30, span(15, 30)));
    await new ShardCommitter(store).commit(request(40, 44, span(40, 44), 'former owner'));
    await c.commit(request(31, 60, [...span(31, 39), ...span(45, 60)]));
    expect(outcomes).toEqual(['committed', 'existing', 'skipped', 'conflicted', 'committed', 'committed']);
    expect(await store.list('_commits/')).toEqual([manifestKey(pos(0), pos(9)), manifestKey(pos(10), pos(14)), manifestKey(pos(15), pos(30)), manifestKey(pos(31), pos(60)), manifestKey(pos(40), pos(44))]);
    const rows = await readCommittedRows(store, 'dead_letters');
    expect(rows.map((r) => Number(r.source_offset)).sort((a, b) => a - b)).toEqual(span(0, 60));
    expect(rows.filter((r) => r.error === 'rebuilt')).toEqual([]);
  });
});

describe('KafkaSource re-reads a partition after a conflicting range appears', () => {
  let f: KafkaFixture;
  beforeAll(async () => {
    f = await kafkaFixture('reset', { records: 300, bad: 0, partitions: 1 });
  }, 120_000);
  afterAll(async () => f?.cleanup());

  it('drops its own range, reads again from the commit point, skips the foreign range: every offset once', async () => {
    const unit = `${f.topic}+0`;
    const cfg = KafkaConfig.parse({ group_id: f.group, session_timeout_ms: 6000, heartbeat_interval_ms: 500, max_wait_ms: 300 });
    const consumer = new KafkajsConsumer(createKafkajs(cfg, lineLogger(() => undefined)), cfg, [f.topic], f.group);
    // When our first range [0..99] is about to be committed, a "former owner" commits [60..69].
    const firstKey = manifestKey(positionString(unit, 0, 'kafka'), positionString(unit, 99, 'kafka'));
    let injected = false;
    const store = Object.create(f.store) as S3ObjectStore;
    store.get = async (key: string) => {
      if (key === firstKey && !injected) {
        injected = true;
        const rows = span(60, 69).map((o) => ({ ...deadRow(o, 'former owner'), source_unit: unit }));
        await new ShardCommitter(f.store).commit({ source: 'kafka', first: positionString(unit, 60, 'kafka'), last: positionString(unit, 69, 'kafka'), tables: { dead_letters: rows }, range: { unit, unit_token: unit, first_offset: 60, last_offset: 69, records: 10 } });
      }
      return f.store.get(key);
    };
    const logs: string[] = [];
    const source = new KafkaSource({ consumer, topics: [f.topic], store, maxBufferedMessages: 1000, maxBufferedBytes: 64 << 20, flushIdleMs: 200, maxMessageBytes: 16 << 20, untilCaughtUp: true, quietMs: 300, log: lineLogger((l) => logs.push(l)) });
    let counters: Awaited<ReturnType<typeof runStage>> | undefined;
    const outcomes: RangeOutcome[] = [];
    const rangeDone = source.rangeDone.bind(source);
    source.rangeDone = (r) => {
      outcomes.push(r.outcome);
      rangeDone(r);
    };
    const config = parseConfig({ ...defaultConfigInput(), cache: { enabled: false, dir: '.cache/none' } });
    const sim = createSimProvider({ profile: withoutFaults(defaultProfile()), latency: 'instant' });
    const runtime = await openRuntime({ config, auditLogPath: null, providerFor: () => sim });
    await source.start();
    try {
      counters = await runStage({ source, intake: intakeSettings(config), steps: judgingSteps({ config, jury: runtime.jury }), committer: new ShardCommitter(store), concurrency: 8, range: { maxRecords: 100, maxChars: 1 << 30, sequentialUnits: false }, log: lineLogger((l) => logs.push(l)) });
    } finally {
      await source.close();
      await runtime.close();
    }
    expect(injected).toBe(true);
    expect(outcomes.filter((o) => o === 'conflicted')).toHaveLength(1);
    // A range left unwritten is not counted as committed; its records were read again.
    expect(counters!.ranges_not_written).toBe(outcomes.filter((o) => o === 'skipped' || o === 'conflicted').length);
    expect(counters!.ranges_committed).toBe(outcomes.filter((o) => o === 'committed' || o === 'existing').length);
    expect(source.stats.resets).toBe(1);
    expect(logs.join('')).toMatch(/overlaps committed range 60\.\.69/);
    expect(logs.join('')).toMatch(/\+0 reset: \d+ uncommitted record\(s\) dropped; they are re-read from offset 0/);
    const verdicts = await readCommittedRows(f.store, 'verdicts');
    const dead = await readCommittedRows(f.store, 'dead_letters');
    const offsets = [...verdicts, ...dead].map((r) => Number(r.source_offset)).sort((a, b) => a - b);
    expect(offsets).toEqual(span(0, 299));
    expect(dead.map((d) => d.error)).toEqual(Array(10).fill('former owner'));
    expect(new Set(verdicts.map((v) => v.record_id)).size).toBe(290);
    expect(await offsetsBehindShards(f)).toEqual([]);
    const [committed] = await f.admin.fetchOffsets({ groupId: f.group, topics: [f.topic] });
    expect(committed!.partitions[0]!.offset).toBe('300');
  }, 60_000);
});
