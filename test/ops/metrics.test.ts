// The metrics `run --metrics-port` serves (src/ops/metrics.ts), fed by hand: stage counters read
// live when scraped, gateway events, commit timings, source lag and breaker state; and the
// names, as parsed from the exposition text, follow the Prometheus conventions.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HealthView, StageView } from '../../src/ops/inputs.js';
import { createRunMetrics, METRIC_PREFIX } from '../../src/ops/metrics.js';
import { metricRows, renderMetricsReference } from '../../src/ops/reference.js';
import type { Source, SourceLag } from '../../src/pipeline/source.js';
import { newCounters } from '../../src/pipeline/stage.js';
import { packageRoot } from '../../src/util/paths.js';
import { conventionProblems, parseExposition, total } from '../helpers/prom-text.js';

function fakeSource(state: { connected: boolean; lag: SourceLag[] }): Source {
  return {
    name: 'fake',
    async *[Symbol.asyncIterator]() {},
    close: async () => undefined,
    connected: () => state.connected,
    lag: () => state.lag,
  } as Source;
}

const usage = (tokens_in: number, tokens_out: number, cost_usd: number, outcome: 'ok' | 'error' = 'ok') => ({ phase: 'phase1' as const, participant: 'j', model: 'm-a', endpoint: 'vllm', tokens_in, tokens_out, cost_usd, latency_ms: 5, attempts: 1, outcome });

describe('run metrics', () => {
  it('read the stage counters live, so every scrape is current', async () => {
    const m = createRunMetrics();
    const before = parseExposition(await m.exposition());
    expect(total(before, 'reasoning_jury_records_read_total')).toBe(0);
    const counters: StageView['counters'] = { ...newCounters(), paused_ms: 0, pauses: 0 };
    m.watch({ source: fakeSource({ connected: true, lag: [] }), counters });
    Object.assign(counters, { read: 10, skipped_committed: 3, in_flight: 4, judged: 5, clean: 3, degraded: 1, no_verdict: 1, dead_letters: 1, ranges_committed: 1, records_committed: 6, paused_ms: 2500, pauses: 1 });
    const a = parseExposition(await m.exposition());
    expect(total(a, 'reasoning_jury_records_read_total')).toBe(10);
    expect(total(a, 'reasoning_jury_records_skipped_total')).toBe(3);
    expect(total(a, 'reasoning_jury_records_in_flight')).toBe(4);
    expect(total(a, 'reasoning_jury_records_judged_total')).toBe(5);
    expect(total(a, 'reasoning_jury_records_judged_total', { outcome: 'degraded' })).toBe(1);
    expect(total(a, 'reasoning_jury_records_judged_total', { outcome: 'no_verdict' })).toBe(1);
    expect(total(a, 'reasoning_jury_records_dead_lettered_total')).toBe(1);
    expect(total(a, 'reasoning_jury_ranges_committed_total')).toBe(1);
    expect(total(a, 'reasoning_jury_paused_seconds_total')).toBe(2.5);
    expect(total(a, 'reasoning_jury_pauses_total')).toBe(1);
    counters.judged = 9;
    counters.clean = 7;
    const b = parseExposition(await m.exposition());
    expect(total(b, 'reasoning_jury_records_judged_total')).toBe(9);
  });

  it('count model attempts and calls per endpoint and model', async () => {
    const m = createRunMetrics();
    const at = { endpoint: 'vllm', model: 'm-a' };
    m.gateway.onAttempt!({ ...at, seconds: 0.2, outcome: 'error', errorKind: 'rate_limited', retried: true });
    m.gateway.onAttempt!({ ...at, seconds: 0.4, outcome: 'error', errorKind: 'connection', retried: false });
    m.gateway.onAttempt!({ ...at, seconds: 1.5, outcome: 'ok', retried: false });
    m.gateway.onCall!({ ...at, usage: usage(100, 20, 0.25), cached: false });
    m.gateway.onCall!({ ...at, usage: usage(50, 10, 0.1), cached: true });
    m.gateway.onCall!({ ...at, usage: usage(0, 0, 0, 'error'), cached: false });
    const e = parseExposition(await m.exposition());
    expect(total(e, 'reasoning_jury_model_requests_total', { ...at })).toBe(3);
    expect(total(e, 'reasoning_jury_model_requests_total', { outcome: 'error' })).toBe(2);
    expect(total(e, 'reasoning_jury_model_request_errors_total', { kind: 'rate_limited' })).toBe(1);
    expect(total(e, 'reasoning_jury_model_request_errors_total', { kind: 'connection' })).toBe(1);
    expect(total(e, 'reasoning_jury_model_rate_limited_total', at)).toBe(1);
    expect(total(e, 'reasoning_jury_model_retries_total', at)).toBe(1);
    expect(total(e, 'reasoning_jury_model_request_duration_seconds_count', at)).toBe(3);
    expect(total(e, 'reasoning_jury_model_request_duration_seconds_sum', at)).toBeCloseTo(2.1, 9);
    expect(total(e, 'reasoning_jury_model_request_duration_seconds_bucket', { ...at, le: '1' })).toBe(2);
    expect(total(e, 'reasoning_jury_model_calls_total', { outcome: 'ok' })).toBe(2);
    expect(total(e, 'reasoning_jury_model_calls_total', { cache: 'hit' })).toBe(1);
    expect(total(e, 'reasoning_jury_model_tokens_total', { direction: 'in' })).toBe(150);
    expect(total(e, 'reasoning_jury_model_tokens_total', { direction: 'out', cache: 'miss' })).toBe(20);
    expect(total(e, 'reasoning_jury_model_cost_usd_total')).toBeCloseTo(0.35, 12);
    expect(total(e, 'reasoning_jury_model_cost_usd_total', { cache: 'miss' })).toBeCloseTo(0.25, 12);
  });

  it('time queued in our limiter goes to its own histogram, not into the request duration', async () => {
    const m = createRunMetrics();
    const at = { endpoint: 'llama', model: 'm-a' };
    m.gateway.onAttempt!({ ...at, seconds: 0.3, queueSeconds: 4, outcome: 'ok', retried: false });
    m.gateway.onAttempt!({ ...at, seconds: 0.3, queueSeconds: 0, outcome: 'ok', retried: false });
    const e = parseExposition(await m.exposition());
    expect(total(e, 'reasoning_jury_model_request_duration_seconds_sum', at)).toBeCloseTo(0.6, 9);
    expect(total(e, 'reasoning_jury_model_queue_wait_seconds_count', at)).toBe(2);
    expect(total(e, 'reasoning_jury_model_queue_wait_seconds_sum', at)).toBeCloseTo(4, 9);
    expect(total(e, 'reasoning_jury_model_queue_wait_seconds_bucket', { ...at, le: '1' })).toBe(1);
  });

  it('show commit latency, source lag and breaker state', async () => {
    const m = createRunMetrics();
    const src = { connected: false, lag: [{ unit: 'traces+0', lag: 12 }, { unit: 'traces+1', lag: 0 }] };
    const states = new Map<string, 'up' | 'down' | 'probing'>([['vllm', 'up'], ['ollama', 'down']]);
    const health: HealthView = { endpoints: () => [...states].map(([name, state]) => ({ name, state })), allDown: () => false };
    m.watch({ source: fakeSource(src), counters: newCounters(), health });
    m.onRangeDone({ outcome: 'committed', records: 100, seconds: 0.3 });
    m.onRangeDone({ outcome: 'existing', records: 100, seconds: 0.01 });
    let e = parseExposition(await m.exposition());
    expect(total(e, 'reasoning_jury_range_commit_duration_seconds_count')).toBe(2);
    expect(total(e, 'reasoning_jury_range_commit_duration_seconds_count', { outcome: 'committed' })).toBe(1);
    expect(total(e, 'reasoning_jury_source_connected')).toBe(0);
    expect(total(e, 'reasoning_jury_source_lag_records', { unit: 'traces+0' })).toBe(12);
    expect(total(e, 'reasoning_jury_endpoint_up', { endpoint: 'vllm' })).toBe(1);
    expect(total(e, 'reasoning_jury_endpoint_up', { endpoint: 'ollama' })).toBe(0);
    expect(total(e, 'reasoning_jury_endpoint_state', { endpoint: 'ollama', state: 'down' })).toBe(1);
    expect(total(e, 'reasoning_jury_endpoint_state', { endpoint: 'ollama' })).toBe(1);
    // A partition that moved away and an endpoint that recovered: no stale series stays behind.
    src.lag = [{ unit: 'traces+1', lag: 3 }];
    src.connected = true;
    states.set('ollama', 'probing');
    e = parseExposition(await m.exposition());
    expect(e.samples.filter((s) => s.name === 'reasoning_jury_source_lag_records').map((s) => s.labels.unit)).toEqual(['traces+1']);
    expect(total(e, 'reasoning_jury_source_connected')).toBe(1);
    expect(total(e, 'reasoning_jury_endpoint_state', { endpoint: 'ollama', state: 'probing' })).toBe(1);
    expect(total(e, 'reasoning_jury_endpoint_up', { endpoint: 'ollama' })).toBe(0);
  });

  it('show batch mode: batches submitted, finished by outcome and in progress, requests waiting, the oldest wait; zero online', async () => {
    const m = createRunMetrics();
    const online = parseExposition(await m.exposition());
    for (const name of ['batches_submitted_total', 'batches_finished_total', 'batches_in_progress', 'batch_requests_waiting', 'batch_oldest_wait_seconds']) expect(total(online, `reasoning_jury_${name}`), name).toBe(0);
    const stats = { submitted: 4, in_progress: 2, completed: 1, failed: 1, requests_submitted: 900, served_from_journal: 12, waiting: 350, oldest_wait_ms: 61_500 };
    m.watch({ source: fakeSource({ connected: true, lag: [] }), counters: newCounters(), batch: () => stats });
    let e = parseExposition(await m.exposition());
    expect(total(e, 'reasoning_jury_batches_submitted_total')).toBe(4);
    expect(total(e, 'reasoning_jury_batches_finished_total', { outcome: 'completed' })).toBe(1);
    expect(total(e, 'reasoning_jury_batches_finished_total', { outcome: 'failed' })).toBe(1);
    expect(total(e, 'reasoning_jury_batches_in_progress')).toBe(2);
    expect(total(e, 'reasoning_jury_batch_requests_submitted_total')).toBe(900);
    expect(total(e, 'reasoning_jury_batch_requests_from_journal_total')).toBe(12);
    expect(total(e, 'reasoning_jury_batch_requests_waiting')).toBe(350);
    expect(total(e, 'reasoning_jury_batch_oldest_wait_seconds')).toBe(61.5);
    Object.assign(stats, { in_progress: 0, completed: 3, waiting: 0, oldest_wait_ms: 0 }); // read live
    e = parseExposition(await m.exposition());
    expect(total(e, 'reasoning_jury_batches_finished_total', { outcome: 'completed' })).toBe(3);
    expect(total(e, 'reasoning_jury_batches_in_progress')).toBe(0);
    expect(total(e, 'reasoning_jury_batch_requests_waiting')).toBe(0);
  });

  it('are named by the Prometheus conventions (checked on the exposition text)', async () => {
    const m = createRunMetrics();
    m.watch({ source: fakeSource({ connected: true, lag: [{ unit: 't+0', lag: 1 }] }), counters: newCounters(), health: { endpoints: () => [{ name: 'e', state: 'up' }], allDown: () => false } });
    m.gateway.onAttempt!({ endpoint: 'e', model: 'x', seconds: 1, outcome: 'error', errorKind: 'timeout', retried: true });
    m.gateway.onCall!({ endpoint: 'e', model: 'x', usage: usage(1, 1, 0), cached: false });
    m.onRangeDone({ outcome: 'committed', records: 1, seconds: 1 });
    const e = parseExposition(await m.exposition());
    expect(conventionProblems(e, METRIC_PREFIX)).toEqual([]);
    expect([...e.types.keys()].sort()).toEqual(metricRows().map((r) => r.name).sort());
    // The checker itself catches what it is there for.
    const bad = parseExposition('# HELP reasoning_jury_commit_ms x\n# TYPE reasoning_jury_commit_ms counter\nreasoning_jury_commit_ms{Endpoint="a"} 1\n');
    expect(conventionProblems(bad, METRIC_PREFIX)).toEqual(['reasoning_jury_commit_ms: a counter must end in _total', 'reasoning_jury_commit_ms: not a base unit', 'reasoning_jury_commit_ms: label Endpoint is not snake_case']);
  });
});

describe('docs/metrics.md', () => {
  it('is what the registry renders (run `npm run docs:metrics` after changing a metric)', () => {
    const onDisk = readFileSync(join(packageRoot(), 'docs', 'metrics.md'), 'utf8');
    if (onDisk !== renderMetricsReference()) expect.fail('docs/metrics.md is out of date with src/ops/metrics.ts: regenerate it with `npm run docs:metrics` and commit the result');
    for (const r of metricRows()) expect(onDisk).toContain(`| \`${r.name}\` | ${r.type} |`);
  });
});
