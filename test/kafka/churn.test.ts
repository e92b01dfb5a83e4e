// A consumer group that changes while it works (issue 42): instances killed and restarted, a
// third joining, one stopped with SIGTERM, one killed right after a manifest, at seeded points
// chosen by progress (committed manifests). Ranges are small, so several ranges per partition
// are in flight. The test watches each partition's committed offset: one with records left whose
// offset stops moving while instances run is a stranded partition and fails the test.
// RJ_CHURN_SEED picks another schedule.
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyOutput } from '../../src/pipeline/commit/shard-list.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { createRng } from '../../src/util/prng.js';
import { BIN } from '../helpers/cli.js';
import { LONG_TEST_MS, STALL_MS } from '../helpers/progress.js';
import { tempDir } from '../helpers/run-setup.js';
import { kafkaFixture, offsetsBehindShards, type KafkaFixture } from './helpers/fixture.js';
import { ensureServices, groupOffsets } from './helpers/services.js';

ensureServices();

const SEED = Number(process.env.RJ_CHURN_SEED ?? 1);
type Change = 'kill-restart' | 'join' | 'term' | 'kill-after-manifest';

interface Instance {
  name: string;
  child: ChildProcess;
  stderr: string;
  exited: Promise<number | null>;
}

function start(args: string[], name: string): Instance {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  const inst: Instance = { name, child, stderr: '', exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))) };
  child.stderr!.on('data', (d) => (inst.stderr += d));
  return inst;
}

describe('Kafka consumer group churn', () => {
  let f: KafkaFixture;
  beforeAll(async () => {
    f = await kafkaFixture('churn', { records: 2400, bad: 0, partitions: 8 });
  }, LONG_TEST_MS);
  afterAll(async () => f?.cleanup());

  it(`seed ${SEED}: five membership changes, every record once, offsets at the end, no stranded partition`, async () => {
    const config = f.config(tempDir('kafka-churn'), { session_timeout_ms: 6000, heartbeat_interval_ms: 500, max_buffered_messages: 120 }, 0, 'single');
    const args = f.args(config, ['--range-records', '25', '--concurrency', '16']);
    const rng = createRng(['kafka-churn', SEED]);
    const changes: Change[] = ['kill-restart', 'join', 'kill-after-manifest', 'term', 'kill-restart'];
    for (let i = changes.length - 1; i > 0; i--) {
      const j = Math.floor(rng.next() * (i + 1));
      [changes[i], changes[j]] = [changes[j]!, changes[i]!];
    }
    // Kill points: manifest counts spread over the first two thirds of the ~100 full ranges.
    const points = changes.map((_, i) => 6 + i * 12 + Math.floor(rng.next() * 8));
    const high = new Map((await f.admin.fetchTopicOffsets(f.topic)).map((p) => [p.partition, Number(p.high)]));
    const live: Instance[] = [start(args, 'A'), start(args, 'B')];
    const all = [...live];
    let n = 2;
    const log: string[] = [];

    // The lag watch: a partition with records left whose committed offset does not move for the
    // stall window while instances run is stranded.
    const moved = new Map<number, { offset: number; at: number }>();
    let stranded = '';
    const watch = setInterval(() => {
      void groupOffsets(f.admin, f.group, f.topic).then((offsets) => {
        const now = Date.now();
        for (const [p, end] of high) {
          const o = offsets.get(p) ?? -1;
          const seen = moved.get(p);
          if (!seen || seen.offset !== o) moved.set(p, { offset: o, at: now });
          else if (o < end && live.length > 0 && now - seen.at > STALL_MS) stranded ||= `partition ${p} stuck at ${o} of ${end}`;
        }
      }, () => undefined);
    }, 1000);
    try {
      for (const [i, change] of changes.entries()) {
        for (;;) {
          if (stranded) throw new Error(`${stranded}\n${all.map((x) => `--- ${x.name}\n${x.stderr.slice(-1500)}`).join('\n')}`);
          const m = await f.manifests();
          if (m >= points[i]!) break;
          await new Promise((r) => setTimeout(r, change === 'kill-after-manifest' ? 20 : 200));
        }
        const victim = live[Math.floor(rng.next() * live.length)]!;
        if (change === 'join') live.push(start(args, String.fromCharCode(65 + n++)));
        else {
          victim.child.kill(change === 'term' ? 'SIGTERM' : 'SIGKILL');
          const code = await victim.exited;
          if (change === 'term') expect(code, victim.stderr).toBe(0);
          live.splice(live.indexOf(victim), 1);
          if (change !== 'term' || live.length === 0) live.push(start(args, String.fromCharCode(65 + n++)));
        }
        all.push(...live.filter((x) => !all.includes(x)));
        log.push(`${change}@${points[i]}`);
      }
      for (const inst of [...live]) {
        const code = await Promise.race([inst.exited, new Promise<'stranded'>((resolve) => {
          const t = setInterval(() => stranded && (clearInterval(t), resolve('stranded')), 500);
          void inst.exited.then(() => clearInterval(t));
        })]);
        if (code === 'stranded') throw new Error(`${stranded}\n${all.map((x) => `--- ${x.name}\n${x.stderr.slice(-1500)}`).join('\n')}`);
        expect(code, inst.stderr.slice(-3000)).toBe(0);
        live.splice(live.indexOf(inst), 1);
      }
    } finally {
      clearInterval(watch);
      for (const x of live) x.child.kill('SIGKILL');
    }
    const watchdogLines = all.reduce((k, x) => k + (x.stderr.match(/not fetched for/g)?.length ?? 0), 0);
    const errorLines = all.flatMap((x) => x.stderr.split('\n').filter((l) => / error: /.test(l)));
    console.log(`churn seed ${SEED}: ${log.join(', ')}; ${all.length} instances, ${await f.manifests()} manifests, watchdog lines ${watchdogLines}, error lines ${errorLines.length}`);

    expect((await verifyOutput(f.store)).problems).toEqual([]);
    const ids = (await readCommittedRows(f.store, 'verdicts')).map((v) => String(v.record_id));
    expect(ids.length).toBe(f.produced.goodIds.length);
    expect(new Set(ids)).toEqual(new Set(f.produced.goodIds));
    expect(await offsetsBehindShards(f)).toEqual([]);
    const committed = await groupOffsets(f.admin, f.group, f.topic);
    for (const [p, end] of high) expect(committed.get(p), `partition ${p}`).toBe(end);
    expect(errorLines).toEqual([]);
  }, LONG_TEST_MS);
});
