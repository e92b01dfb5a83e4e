/**
 * Reviews from the command line: `review` and `review import` append committed batches under
 * OUT/reviews/, a bad file commits nothing, and `decide` then writes the reviewed decisions into
 * its decisions table and its corpus partitions (reason and rule `review:<reviewer>`).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { claimOutput } from '../../src/compose/output-claim.js';
import { WHOLE_OUTPUT } from '../../src/pipeline/commit/lease-record.js';
import { LocalObjectStore } from '../../src/pipeline/storage/object-store.js';
import { latestReviews, readReviews } from '../../src/pipeline/commit/reviews.js';
import { listCommitted } from '../../src/pipeline/commit/shard-commit.js';
import { readCommittedRows, readParquetRows, type PlainRow } from '../../src/pipeline/commit/shard-read.js';
import { defaultProfile, startSimulator, type RunningSimulator } from '../../src/sim/index.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { runCli } from '../helpers/cli.js';

const POLICY = { rules: [{ name: 'fatal_defect', min_impact: 'fatal', decision: 'drop' }, { name: 'some_dissent', has_dissent: true, decision: 'review' }], default: 'keep' };

/** The committed corpus rows of an output, each with the `decision=` folder its part sits in. */
async function corpusRows(out: string): Promise<(PlainRow & { folder: string })[]> {
  const store = new LocalObjectStore(out);
  const rows: (PlainRow & { folder: string })[] = [];
  for (const m of await listCommitted(store)) {
    for (const f of m.files.filter((x) => x.table === 'corpus')) {
      const folder = /decision=(\w+)\//.exec(f.key)![1]!;
      for (const r of await readParquetRows((await store.get(f.key))!, { columns: ['record_id', 'decision', 'rule', 'reason'] })) rows.push({ ...r, folder });
    }
  }
  return rows;
}

describe('review, review import, then decide', () => {
  let sim: RunningSimulator;
  let dir: string;
  let out: string;
  let decisions: PlainRow[];

  beforeAll(async () => {
    sim = await startSimulator({ profile: defaultProfile() });
    dir = mkdtempSync(join(tmpdir(), 'rj-review-'));
    out = join(dir, 'out');
    writeFileSync(join(dir, 'in.jsonl'), syntheticRecords(24, { seed: 5, cleanShare: 0.3 }).map((r) => JSON.stringify(r)).join('\n') + '\n');
    writeFileSync(join(dir, 'jury.yaml'), YAML.stringify({
      endpoints: { sim: { kind: 'openai', base_url: sim.url, max_retries: 8, backoff_base_ms: 1, backoff_max_ms: 20 } },
      jurors: ['a', 'b', 'c'].map((x) => ({ id: `j-${x}`, endpoint: 'sim', model: `sim-juror-${x}` })),
      consolidator: { id: 'consolidator', endpoint: 'sim', model: 'sim-consolidator' },
      mode: 'consolidation',
      filter: POLICY,
    }));
    writeFileSync(join(dir, 'policy.yaml'), YAML.stringify(POLICY));
    const run = await runCli(['run', '-c', join(dir, 'jury.yaml'), '-i', join(dir, 'in.jsonl'), '-o', out, '--range-records', '8', '--progress', 'none']);
    if (run.code !== 0) throw new Error(run.stderr);
    decisions = await readCommittedRows(new LocalObjectStore(out), 'decisions');
  });
  afterAll(async () => {
    await sim.close();
  });

  it('records reviews in committed batches, refuses bad ones whole, and decide follows the latest review', async () => {
    const store = new LocalObjectStore(out);
    const kept = decisions.filter((d) => d.decision === 'keep').map((d) => String(d.record_id));
    const notKept = decisions.filter((d) => d.decision !== 'keep').map((d) => String(d.record_id));
    expect(kept.length).toBeGreaterThan(2);
    expect(notKept.length).toBeGreaterThan(0);
    const [a, b, c] = kept;
    const z = notKept[0]!;

    const one = await runCli(['review', out, '--record', a!, '--decision', 'keep', '--reviewer', 'ana']);
    expect(one.code, one.stderr).toBe(0);
    // Reviewed again later: the latest counts.
    const again = await runCli(['review', out, '--record', a!, '--decision', 'drop', '--note', 'carry error', '--reviewer', 'ana']);
    expect(again.code, again.stderr).toBe(0);

    writeFileSync(join(dir, 'r.csv'), `id,decision,note\n${b},DROP,"wrong, ""really"""\n${z},keep,\n`);
    const csv = await runCli(['review', 'import', out, join(dir, 'r.csv'), '--reviewer', 'bo']);
    expect(csv.code, csv.stderr).toBe(0);
    expect(csv.stdout).toContain('2 review(s) imported');

    // One bad line fails the whole file: nothing of it is committed.
    writeFileSync(join(dir, 'bad.jsonl'), `${JSON.stringify({ record_id: c, decision: 'drop' })}\n${JSON.stringify({ record_id: 'no-such-record', decision: 'drop' })}\n`);
    const bad = await runCli(['review', 'import', out, join(dir, 'bad.jsonl')]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('bad.jsonl:2: record "no-such-record" is not in the output\'s committed verdicts');
    const wrong = await runCli(['review', out, '--record', c!, '--decision', 'review']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('decision must be keep or drop');

    const reviews = await readReviews(store);
    expect(reviews.map((r) => [r.record_id, r.decision, r.reviewer, r.note])).toEqual([
      [a, 'keep', 'ana', null],
      [a, 'drop', 'ana', 'carry error'],
      [b, 'drop', 'bo', 'wrong, "really"'],
      [z, 'keep', 'bo', null],
    ]);
    const verify = await runCli(['shards', 'verify', join(out, 'reviews')]);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);

    const decided = join(dir, 'decided');
    const d = await runCli(['decide', '--policy', join(dir, 'policy.yaml'), '--shards', out, '--out', decided]);
    expect(d.code, d.stderr).toBe(0);
    expect(d.stdout).toMatch(/set by a human review[^\n]*\s3\n/);
    const latest = latestReviews(reviews);
    const rows = await readCommittedRows(new LocalObjectStore(decided), 'decisions');
    for (const r of rows) {
      const review = latest.get(String(r.record_id));
      const policy = decisions.find((x) => x.record_id === r.record_id)!;
      if (review) expect([r.decision, r.reason]).toEqual([review.decision, `review:${review.reviewer}`]);
      else expect([r.decision, r.reason]).toEqual([policy.decision, policy.reason]);
    }
    // The corpus partitions follow: each reviewed record sits under its reviewed decision.
    const corpus = await corpusRows(decided);
    expect(corpus.length).toBe(decisions.length);
    for (const [id, review] of latest) {
      expect(corpus.find((r) => r.record_id === id)).toMatchObject({ folder: review.decision, decision: review.decision, rule: `review:${review.reviewer}` });
    }

    // While another command writes the output, a review waits its turn: exit 4, nothing written.
    const lease = await claimOutput({ store, location: out }, { command: 'run', scope: WHOLE_OUTPUT, settings: { expiryMs: 60_000, waitMs: 0, takeOver: false } });
    try {
      const busy = await runCli(['review', out, '--record', c!, '--decision', 'drop']);
      expect(busy.code, busy.stderr).toBe(4);
      expect(busy.stderr).toContain('is being written by run');
      expect(await readReviews(store)).toHaveLength(4);
    } finally {
      await lease.release();
    }

    // A decide resumed into the same --out under other reviews is refused, not mixed.
    expect((await runCli(['review', out, '--record', c!, '--decision', 'drop'])).code).toBe(0);
    const mixed = await runCli(['decide', '--policy', join(dir, 'policy.yaml'), '--shards', out, '--out', decided]);
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toContain('decided under other reviews');
  });

  it('view of a folder with no committed range stops with one line, and review of a record not judged there too', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'rj-view-empty-'));
    const v = await runCli(['view', empty, '--port', '0']);
    expect(v.code).toBe(2);
    expect(v.stderr.trim()).toBe(`reasoning-jury: ${empty} holds no committed ranges (no _commits/*.json): nothing to view`);
    const r = await runCli(['review', empty, '--record', 'x', '--decision', 'keep']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('record "x" is not in the output\'s committed verdicts');
  });
});
