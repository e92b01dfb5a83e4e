import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Verdict } from '../../schemas/verdict.js';
import { buildGoldIndex, defaultProfile, parseProfile, startSimulator, type RunningSimulator } from '../../src/sim/index.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { readAudit } from '../deliberation/helpers.js';
import { judgeAll, juryOn, withRuntime } from '../helpers/jury.js';

/** Real `openai` client -> loopback HTTP -> juror simulator. */
describe('jury over the real openai client against the simulator', () => {
  const records = syntheticRecords(40, { seed: 11 });
  let sim: RunningSimulator;
  beforeAll(async () => {
    // Jurors sometimes cite steps past the end of the trace, as real models do.
    const profile = defaultProfile();
    for (const m of Object.values(profile.models)) m.rate_bad_ref = 0.1;
    sim = await startSimulator({ profile, gold: buildGoldIndex(records) });
  });
  afterAll(() => sim.close());

  it('3 jurors + consolidation give schema-valid verdicts citing existing steps only', async () => {
    const audit = join(mkdtempSync(join(tmpdir(), 'rj-refs-')), 'audit.jsonl');
    const verdicts = await withRuntime(juryOn(sim.url), (rt) => judgeAll(rt, records), audit);
    expect(verdicts).toHaveLength(records.length);
    let defects = 0;
    let truePositives = 0;
    verdicts.forEach((v, i) => {
      expect(Verdict.parse(v)).toEqual(v);
      expect(v.record_id).toBe(records[i]!.id);
      expect(v.phase1_judgements.map((j) => j.juror_id)).toEqual(['jury-0', 'jury-1', 'jury-2']);
      for (const d of [...v.defects, ...v.phase1_judgements.flatMap((j) => j.defects)]) {
        for (const s of d.statement_refs) expect(s).toBeGreaterThanOrEqual(1), expect(s).toBeLessThanOrEqual(v.n_steps);
      }
      const gold = new Set(records[i]!.gold!.error_steps);
      for (const d of v.defects) {
        defects++;
        if (d.statement_refs.some((s) => gold.has(s))) truePositives++;
        for (const voter of d.voters ?? []) expect(['jury-0', 'jury-1', 'jury-2']).toContain(voter);
      }
    });
    // Out-of-range refs were never stored: such a reply was asked again, saying why.
    const reasked = readAudit(audit).filter((l) => l.outcome === 'reask' && /is not a step of this trace/.test(String(l.error)));
    expect(reasked.length).toBeGreaterThan(10);
    // A juror that cited them again failed for its record, and the verdict says so.
    for (const v of verdicts) for (const j of v.phase1_judgements.filter((x) => !x.ok)) expect(`${v.degraded_reason} ${v.error}`).toContain(j.error);
    // The simulated jury grades against gold, so most consolidated findings must hit gold steps.
    expect(defects).toBeGreaterThan(20);
    expect(truePositives / defects).toBeGreaterThan(0.7);
    // The default profile injects fenced/prose/malformed replies: the layer repaired them. A
    // record without a verdict lost its jurors to refs outside the trace, nothing else.
    for (const v of verdicts.filter((x) => x.error !== null)) expect(v.error).toMatch(/is not a step of this trace/);
    expect(verdicts.filter((v) => v.error === null).length).toBeGreaterThan(records.length / 2);
  });
});

describe('fault run: 500 records under 10% 429, 5% 500, 5% timeouts, 10% malformed JSON', () => {
  it('every record gets a verdict and degraded ones say why', async () => {
    const records = syntheticRecords(500, { seed: 23 });
    const profile = parseProfile({
      seed: 3,
      models: {
        default: { latency_ms: { median: 3, sigma: 0.3, max: 20 }, rate_429: 0.1, rate_500: 0.05, rate_timeout: 0.05, hang_ms: 10_000, rate_malformed_json: 0.1, malformed_repairable: 0.5, retry_after_ms: 20 },
      },
    });
    const sim = await startSimulator({ profile, gold: buildGoldIndex(records) });
    try {
      const dir = mkdtempSync(join(tmpdir(), 'rj-fault-'));
      const audit = join(dir, 'audit.jsonl');
      const { verdicts, ledger } = await withRuntime(
        juryOn(sim.url, {}, { timeout_ms: 400, max_retries: 4, max_concurrency: 64 }),
        async (rt) => ({ verdicts: await judgeAll(rt, records, 48), ledger: rt.gateway.ledger.summary() }),
        audit,
      );
      expect(verdicts.map((v) => v.record_id)).toEqual(records.map((r) => r.id));
      const degraded = verdicts.filter((v) => v.degraded);
      for (const v of degraded) expect(v.degraded_reason).toMatch(/\S/);
      for (const v of verdicts.filter((x) => x.error !== null)) expect(v.degraded).toBe(true);
      const stats = sim.stats();
      const outcome = (k: string) => Object.values(stats.requests).reduce((a, r) => a + ((r as Record<string, number>)[k] ?? 0), 0);
      const format = (k: string) => Object.values(stats.formats).reduce((a, r) => a + ((r as Record<string, number>)[k] ?? 0), 0);
      const counts = {
        records: verdicts.length,
        clean: verdicts.filter((v) => !v.degraded).length,
        degraded: degraded.length,
        no_verdict: verdicts.filter((v) => v.error !== null).length,
        http_requests: stats.total,
        fault_429: outcome('fault_429'),
        fault_500: outcome('fault_500'),
        timeouts: outcome('timeout'),
        malformed: format('malformed_repairable') + format('malformed_broken'),
        logical_calls: ledger.total.calls,
        failed_calls: ledger.total.errors,
        attempts: ledger.total.attempts,
      };
      console.log(`fault run counts: ${JSON.stringify(counts)}`);
      // The faults really happened at about the configured rates (a test that cannot fail otherwise).
      expect(counts.fault_429 / stats.total).toBeGreaterThan(0.06);
      expect(counts.fault_500 / stats.total).toBeGreaterThan(0.025);
      expect(counts.timeouts / stats.total).toBeGreaterThan(0.025);
      expect(counts.malformed).toBeGreaterThan(100);
      expect(counts.logical_calls).toBe(verdicts.reduce((a, v) => a + v.usage.length, 0));
      // Retries absorb almost everything: at most a few records lose a seat.
      expect(counts.clean).toBeGreaterThan(450);
      // The audit log has one line per HTTP attempt.
      const lines = readFileSync(audit, 'utf8').trim().split('\n');
      expect(lines.length).toBe(counts.attempts);
    } finally {
      await sim.close();
    }
  }, 180_000);
});

describe('replay from the response cache', () => {
  it('a second run makes 0 model calls and yields byte-identical verdicts', async () => {
    const records = syntheticRecords(60, { seed: 5 });
    const sim = await startSimulator({ profile: defaultProfile(), gold: buildGoldIndex(records) });
    try {
      const cache = { enabled: true, dir: mkdtempSync(join(tmpdir(), 'rj-cache-')) };
      const first = await withRuntime(juryOn(sim.url, { cache }), (rt) => judgeAll(rt, records));
      const callsAfterFirst = sim.stats().total;
      expect(callsAfterFirst).toBeGreaterThanOrEqual(records.length * 4);
      const { verdicts: second, summary } = await withRuntime(juryOn(sim.url, { cache }), async (rt) => ({ verdicts: await judgeAll(rt, records), summary: rt.gateway.ledger.summary() }));
      expect(sim.stats().total).toBe(callsAfterFirst);
      expect(summary.calls_made).toBe(0);
      expect(summary.calls_cached).toBe(records.length * 4);
      expect(JSON.stringify(second)).toBe(JSON.stringify(first));
      // Switched off, the cache is neither read nor written.
      await withRuntime(juryOn(sim.url, { cache: { ...cache, enabled: false } }), (rt) => judgeAll(rt, records.slice(0, 5)));
      expect(sim.stats().total).toBeGreaterThan(callsAfterFirst);
    } finally {
      await sim.close();
    }
  });
});
