/**
 * The Prometheus metrics of `run` (`--metrics-port`), on a registry of their own. Names follow
 * the Prometheus conventions: the `reasoning_jury_` prefix, `_total` on counters, base units
 * (`_seconds`), snake_case labels. docs/metrics.md is rendered from this registry
 * (./reference.ts), so the page cannot drift from what is served.
 *
 * Three feeds: the stage's counters, read when scraped (the stage counts into an object this
 * module holds, so a scrape is always current and costs the stage nothing); the gateway's
 * observer events for model traffic; and range commit timings.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { AttemptEvent, CallEvent, GatewayObserver } from '../llm/observer.js';
import { newCounters, type RangeTiming } from '../pipeline/stage.js';
import type { EndpointState, StageView } from './inputs.js';
import { factsOf, type ReadinessFacts } from './readiness.js';

export const METRIC_PREFIX = 'reasoning_jury_';
const p = (name: string) => `${METRIC_PREFIX}${name}`;

/** Model attempts: fast local servers to slow reasoning models. */
const REQUEST_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** Range commits: a local fsync to a slow object store with retries. */
const COMMIT_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
const STATES: readonly EndpointState[] = ['up', 'down', 'probing'];

export interface RunMetrics {
  readonly registry: Registry;
  /** hand to the gateway (`RuntimeOptions.observer`) */
  readonly gateway: GatewayObserver;
  /** the stage is about to run: read its counters, source and health from now on */
  watch(view: StageView): void;
  onRangeDone(e: RangeTiming): void;
  /** what readiness depends on, as of now */
  facts(): ReadinessFacts;
  /** the text exposition format */
  exposition(): Promise<string>;
  readonly contentType: string;
}

/** A counter whose value is read from a monotonic source when scraped. */
function mirrored(registry: Registry, name: string, help: string, read: () => number): void {
  new Counter({
    name: p(name),
    help,
    registers: [registry],
    collect() {
      this.reset();
      this.inc(read());
    },
  });
}

function stageMetrics(registry: Registry, view: () => StageView | undefined): void {
  const before = newCounters();
  const c = (): StageView['counters'] => view()?.counters ?? before;
  mirrored(registry, 'records_read_total', 'Records pulled from the source, not counting those skipped as already committed.', () => c().read);
  mirrored(registry, 'records_skipped_total', 'Records skipped because their range is already committed (a restart or another instance).', () => c().skipped_committed);
  new Counter({
    name: p('records_judged_total'),
    help: 'Records judged, by outcome: clean, degraded (a fallback verdict, marked), no_verdict (too few jurors succeeded).',
    labelNames: ['outcome'],
    registers: [registry],
    collect() {
      this.reset();
      const k = c();
      this.inc({ outcome: 'clean' }, k.clean);
      this.inc({ outcome: 'degraded' }, k.degraded);
      this.inc({ outcome: 'no_verdict' }, k.no_verdict);
    },
  });
  mirrored(registry, 'records_dead_lettered_total', 'Records written to the dead_letters table with their reason instead of being judged.', () => c().dead_letters);
  mirrored(registry, 'records_dropped_total', 'Records dropped unwritten because their partition moved to another instance (re-read there).', () => c().dropped_revoked);
  mirrored(registry, 'records_committed_total', 'Records in ranges whose shards are in the output.', () => c().records_committed);
  mirrored(registry, 'ranges_committed_total', 'Ranges whose shards are in the output: written now, or found written.', () => c().ranges_committed);
  mirrored(registry, 'ranges_not_written_total', 'Ranges a streaming source told the stage not to write (partition moved, overlap); re-read.', () => c().ranges_not_written);
  mirrored(registry, 'paused_seconds_total', 'Time intake spent paused, waiting out an outage (model endpoints or storage down).', () => (c().paused_ms ?? 0) / 1000);
  mirrored(registry, 'pauses_total', 'Times intake paused to wait out an outage.', () => c().pauses ?? 0);
  new Gauge({
    name: p('records_in_flight'),
    help: 'Records being judged now.',
    registers: [registry],
    collect() {
      this.set(c().in_flight);
    },
  });
}

function sourceAndHealthMetrics(registry: Registry, view: () => StageView | undefined): void {
  new Gauge({
    name: p('source_connected'),
    help: '1 while the source can deliver records (Kafka: in its consumer group), else 0.',
    registers: [registry],
    collect() {
      this.set(factsOf(view()).sourceConnected ? 1 : 0);
    },
  });
  new Gauge({
    name: p('source_lag_records'),
    help: 'Records not yet in committed shards, per unit (Kafka: log end offset minus the group offset, per partition "topic+partition").',
    labelNames: ['unit'],
    registers: [registry],
    collect() {
      this.reset();
      for (const l of view()?.source.lag?.() ?? []) this.set({ unit: l.unit }, l.lag);
    },
  });
  const health = () => view()?.health?.endpoints() ?? [];
  new Gauge({
    name: p('endpoint_up'),
    help: "1 while the endpoint's circuit breaker lets calls through, 0 while it is down or probing.",
    labelNames: ['endpoint'],
    registers: [registry],
    collect() {
      this.reset();
      for (const e of health()) this.set({ endpoint: e.name }, e.state === 'up' ? 1 : 0);
    },
  });
  new Gauge({
    name: p('endpoint_state'),
    help: "The endpoint's circuit breaker state: 1 for the current one of up, down, probing.",
    labelNames: ['endpoint', 'state'],
    registers: [registry],
    collect() {
      this.reset();
      for (const e of health()) for (const s of STATES) this.set({ endpoint: e.name, state: s }, e.state === s ? 1 : 0);
    },
  });
}

/**
 * Batch mode (`run --batch`): the batched endpoints' batches and the requests waiting for them,
 * read from the providers' counters when scraped. Registered in every run, at zero online, like
 * the pause counters.
 */
function batchMetrics(registry: Registry, view: () => StageView | undefined): void {
  const b = () => view()?.batch?.();
  mirrored(registry, 'batches_submitted_total', 'Batch mode (zero otherwise): batches this run submitted, to the Batch API or the batch command.', () => b()?.submitted ?? 0);
  new Counter({
    name: p('batches_finished_total'),
    help: 'Batch mode: batches over, by outcome: completed (a result for every request), failed (failed, expired, cancelled, lost, or with error-file lines: the requests without a result go out again). Batches re-attached from an earlier run count here too.',
    labelNames: ['outcome'],
    registers: [registry],
    collect() {
      this.reset();
      this.inc({ outcome: 'completed' }, b()?.completed ?? 0);
      this.inc({ outcome: 'failed' }, b()?.failed ?? 0);
    },
  });
  new Gauge({
    name: p('batches_in_progress'),
    help: 'Batch mode: batches submitted and not over yet, those re-attached from the journal of an earlier run included.',
    registers: [registry],
    collect() {
      this.set(b()?.in_progress ?? 0);
    },
  });
  mirrored(registry, 'batch_requests_submitted_total', 'Batch mode: requests sent in batches (a retried request counts again).', () => b()?.requests_submitted ?? 0);
  mirrored(registry, 'batch_requests_from_journal_total', 'Batch mode: calls answered from the batch journal: results of batches an earlier, stopped run had submitted.', () => b()?.served_from_journal ?? 0);
  new Gauge({
    name: p('batch_requests_waiting'),
    help: 'Batch mode: distinct requests waiting for a batch result: in a collector not yet submitted, or in a batch not over.',
    registers: [registry],
    collect() {
      this.set(b()?.waiting ?? 0);
    },
  });
  new Gauge({
    name: p('batch_oldest_wait_seconds'),
    help: 'Batch mode: how long the longest-waiting request has waited (0 when none waits).',
    registers: [registry],
    collect() {
      this.set((b()?.oldest_wait_ms ?? 0) / 1000);
    },
  });
}

function modelMetrics(registry: Registry): GatewayObserver {
  const em = ['endpoint', 'model'] as const;
  const registers = [registry];
  const requests = new Counter({ name: p('model_requests_total'), help: 'HTTP attempts to a model endpoint, by outcome: ok, error.', labelNames: [...em, 'outcome'], registers });
  const errors = new Counter({
    name: p('model_request_errors_total'),
    help: 'Failed attempts by kind: rate_limited (429), server_error (5xx), client_error (4xx), timeout, connection, aborted, other.',
    labelNames: [...em, 'kind'],
    registers,
  });
  const limited = new Counter({ name: p('model_rate_limited_total'), help: 'Attempts answered with HTTP 429 (also counted in model_request_errors_total).', labelNames: em, registers });
  const retries = new Counter({ name: p('model_retries_total'), help: 'Failed attempts that are retried after a backoff.', labelNames: em, registers });
  const latency = new Histogram({ name: p('model_request_duration_seconds'), help: 'Attempt latency, from leaving the endpoint queue to the reply or failure.', labelNames: em, buckets: REQUEST_BUCKETS, registers });
  const queued = new Histogram({ name: p('model_queue_wait_seconds'), help: 'Time an attempt waited in the endpoint queue (max_concurrency, requests_per_second) before it was sent; not part of model_request_duration_seconds.', labelNames: em, buckets: REQUEST_BUCKETS, registers });
  const calls = new Counter({
    name: p('model_calls_total'),
    help: 'Logical model calls (after retries and re-asks), by outcome (ok, error) and cache (hit: replayed from the response cache, miss: sent).',
    labelNames: [...em, 'outcome', 'cache'],
    registers,
  });
  const tokens = new Counter({ name: p('model_tokens_total'), help: 'Tokens of logical calls, by direction (in = prompt, out = completion); cache="hit" replays cost nothing this run.', labelNames: [...em, 'direction', 'cache'], registers });
  const cost = new Counter({ name: p('model_cost_usd_total'), help: 'Dollars of logical calls at the configured prices; cache="hit" is what replayed verdicts record, cache="miss" what this run paid.', labelNames: [...em, 'cache'], registers });
  return {
    onAttempt(e: AttemptEvent) {
      const l = { endpoint: e.endpoint, model: e.model };
      requests.inc({ ...l, outcome: e.outcome });
      latency.observe(l, e.seconds);
      if (e.queueSeconds !== undefined) queued.observe(l, e.queueSeconds);
      if (e.outcome === 'ok') return;
      errors.inc({ ...l, kind: e.errorKind ?? 'other' });
      if (e.errorKind === 'rate_limited') limited.inc(l);
      if (e.retried) retries.inc(l);
    },
    onCall(e: CallEvent) {
      const l = { endpoint: e.endpoint, model: e.model, cache: e.cached ? 'hit' : 'miss' };
      calls.inc({ ...l, outcome: e.usage.outcome });
      tokens.inc({ ...l, direction: 'in' }, e.usage.tokens_in);
      tokens.inc({ ...l, direction: 'out' }, e.usage.tokens_out);
      if (e.usage.cost_usd !== null) cost.inc(l, e.usage.cost_usd);
    },
  };
}

export function createRunMetrics(): RunMetrics {
  const registry = new Registry();
  let view: StageView | undefined;
  const current = () => view;
  stageMetrics(registry, current);
  const commits = new Histogram({
    name: p('range_commit_duration_seconds'),
    help: 'Time to commit a range (clearance, sinks, parts, manifest), by outcome: committed, existing, skipped, conflicted.',
    labelNames: ['outcome'],
    buckets: COMMIT_BUCKETS,
    registers: [registry],
  });
  sourceAndHealthMetrics(registry, current);
  batchMetrics(registry, current);
  const gateway = modelMetrics(registry);
  return {
    registry,
    gateway,
    watch(v) {
      view = v;
    },
    onRangeDone(e) {
      commits.observe({ outcome: e.outcome }, e.seconds);
    },
    facts: () => factsOf(view),
    exposition: () => registry.metrics(),
    get contentType() {
      return registry.contentType;
    },
  };
}
