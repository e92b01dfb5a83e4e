// A partition owner that stops between writing a range's manifest and publishing its parts
// leaves a committed range whose parts are still under `_staging/`. The instance that takes the
// partition over, a survivor that was already running (so its own start-up recovery ran before
// the range existed) and never held the partition, finds the range by its manifest: it must
// publish it, not only skip it. Real broker, real S3 server; the old owner runs in-process so
// its stop can land exactly between manifest and publish.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafkajs, KafkajsConsumer } from '../../connectors/kafka/kafkajs-client.js';
import { KafkaSource } from '../../connectors/kafka/source.js';
import type { S3ObjectStore } from '../../connectors/s3/object-store.js';
import { KafkaConfig } from '../../schemas/kafka.js';
import { openRuntime } from '../../src/compose/runtime.js';
import { defaultConfigInput, parseConfig } from '../../src/config/load.js';
import { manifestKey } from '../../src/pipeline/commit/layout.js';
import { positionString } from '../../src/pipeline/positions.js';
import { ShardCommitter } from '../../src/pipeline/commit/shard-commit.js';
import { verifyOutput } from '../../src/pipeline/commit/shard-list.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { runStage } from '../../src/pipeline/stage.js';
import { intakeSettings, judgingSteps } from '../../src/pipeline/steps/index.js';
import { createSimProvider, defaultProfile, withoutFaults } from '../../src/sim/index.js';
import { lineLogger } from '../../src/util/log.js';
import { runCli } from '../helpers/cli.js';
import { LONG_TEST_MS, waitForProgress } from '../helpers/progress.js';
import { tempDir } from '../helpers/run-setup.js';
import { kafkaFixture, offsetsBehindShards, type KafkaFixture } from './helpers/fixture.js';
import { ensureServices } from './helpers/services.js';

ensureServices();

const RANGE = 50;

describe('a committed range left staged by a stopped owner', () => {
  let f: KafkaFixture;
  beforeAll(async () => {
    f = await kafkaFixture('publish', { records: 200, bad: 0, partitions: 1 });
  }, LONG_TEST_MS);
  afterAll(async () => f?.cleanup());

  it('is published by the survivor that takes the partition over: verify clean, every record readable', async () => {
    const unit = `${f.topic}+0`;
    const firstManifest = manifestKey(positionString(unit, 0, 'kafka'), positionString(unit, RANGE - 1, 'kafka'));
    const firstStaging = `_staging/${positionString(unit, 0, 'kafka')}-${positionString(unit, RANGE - 1, 'kafka')}.`;

    // The survivor: a CLI instance of the same group, started while the old owner holds the
    // only partition, so it sits idle (and its start-up recovery finds nothing to publish).
    const dir = tempDir('kafka-publish');
    const config = f.config(dir, { session_timeout_ms: 6000, heartbeat_interval_ms: 500 }, 0, 'single');
    const args = f.args(config, ['--range-records', String(RANGE)]);
    let survivorErr = '';
    let survivorJoined!: () => void;
    const joined = new Promise<void>((resolve) => (survivorJoined = resolve));

    // The old owner's store: its first manifest waits for the survivor to be in the group, and
    // publishing that range fails as a kill there would leave it.
    const store = Object.create(f.store) as S3ObjectStore;
    // Manifests are written create-only (createObject); putObject is the fallback of stores without it.
    store.createObject = async (key, bytes) => {
      if (key === firstManifest) await joined;
      return f.store.createObject(key, bytes);
    };
    store.move = async (from, to) => {
      if (from.startsWith(firstStaging)) throw new Error('stopped between manifest and publish');
      return f.store.move(from, to);
    };
    const cfg = KafkaConfig.parse({ group_id: f.group, session_timeout_ms: 6000, heartbeat_interval_ms: 500, max_wait_ms: 300 });
    const consumer = new KafkajsConsumer(createKafkajs(cfg, lineLogger(() => undefined)), cfg, [f.topic], f.group);
    const source = new KafkaSource({ consumer, topics: [f.topic], store, maxBufferedMessages: 1000, maxBufferedBytes: 64 << 20, flushIdleMs: 0, maxMessageBytes: 16 << 20, log: lineLogger(() => undefined) });
    const juryConfig = parseConfig({ ...defaultConfigInput(), mode: 'single', jurors: [{ id: 'jury-0', endpoint: 'sim', model: 'sim-juror-a' }], cache: { enabled: false, dir: '.cache/none' } });
    const sim = createSimProvider({ profile: withoutFaults(defaultProfile()), latency: 'instant' });
    const runtime = await openRuntime({ config: juryConfig, auditLogPath: null, providerFor: () => sim });
    await source.start();
    await waitForProgress(() => ({ done: source.connected(), progress: 0 }), { what: 'the old owner joining the group' });

    const survivor = runCli(args, {
      progress: async () => [await f.manifests(), survivorErr.length],
    });
    const stage = runStage({
      source,
      intake: intakeSettings(juryConfig),
      steps: judgingSteps({ config: juryConfig, jury: runtime.jury }),
      committer: new ShardCommitter(store, { corpus: 'parquet' }),
      concurrency: 8,
      range: { maxRecords: RANGE, maxChars: 64 * 1024 * 1024, sequentialUnits: false },
      log: lineLogger(() => undefined),
    });
    // The survivor's own stderr is only read once it ends; its membership shows in the group.
    await waitForProgress(async () => {
      const d = await f.admin.describeGroups([f.group]);
      return { done: (d.groups[0]?.members.length ?? 0) >= 2, progress: d.groups[0]?.members.length };
    }, { what: 'the survivor joining the group' });
    survivorJoined();
    await expect(stage).rejects.toThrow(/stopped between manifest and publish/);
    // What the stopped owner leaves: the range committed, its parts staged, the group behind it.
    expect(await f.store.exists(firstManifest)).toBe(true);
    expect((await f.store.list(firstStaging)).length).toBeGreaterThan(0);
    expect((await verifyOutput(f.store)).problems.length).toBeGreaterThan(0);
    await source.close();
    await runtime.close();

    const r = await survivor;
    survivorErr = r.stderr;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/range\(s\) from \d+ already committed by an earlier owner/);

    expect(await f.store.list('_staging/')).toEqual([]);
    const report = await verifyOutput(f.store);
    expect(report.problems).toEqual([]);
    const ids = (await readCommittedRows(f.store, 'verdicts')).map((v) => String(v.record_id));
    expect(ids.length).toBe(f.produced.goodIds.length);
    expect(new Set(ids)).toEqual(new Set(f.produced.goodIds));
    expect(await offsetsBehindShards(f)).toEqual([]);
    const [committed] = await f.admin.fetchOffsets({ groupId: f.group, topics: [f.topic] });
    expect(committed!.partitions[0]!.offset).toBe('200');
  }, LONG_TEST_MS);
});
