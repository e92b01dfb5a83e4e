/**
 * docs/metrics.md, rendered from the registry `run --metrics-port` serves (./metrics.ts): every
 * metric with its type, labels and help text. `npm run docs:metrics` writes it; a test renders
 * it again and fails when the checked-in page has drifted.
 */
import { createRunMetrics } from './metrics.js';

export interface MetricRow {
  name: string;
  type: string;
  labels: string[];
  help: string;
  /** histogram bucket bounds, in the metric's unit */
  buckets?: number[];
}

type Described = { name: string; help: string; type: string; labelNames?: readonly string[]; upperBounds?: readonly number[] };

/** One row per metric of a fresh registry, in registration order. */
export function metricRows(): MetricRow[] {
  return createRunMetrics()
    .registry.getMetricsAsArray()
    .map((m) => {
      const d = m as unknown as Described;
      return { name: d.name, type: d.type, labels: [...(d.labelNames ?? [])], help: d.help, ...(d.upperBounds ? { buckets: [...d.upperBounds] } : {}) };
    });
}

const cell = (s: string): string => s.replace(/\|/g, '\\|');

export function renderMetricsReference(): string {
  const rows = metricRows().map((r) => {
    const labels = r.labels.length ? r.labels.map((l) => `\`${l}\``).join(', ') : '—';
    const buckets = r.buckets ? ` Buckets: ${r.buckets.join(', ')}.` : '';
    return `| \`${r.name}\` | ${r.type} | ${labels} | ${cell(r.help)}${buckets} |`;
  });
  return `# Metrics and probes

<!-- Generated from the metrics registry by \`npm run docs:metrics\` (src/ops/reference.ts). Do not edit by hand: change the metric's help text in src/ops/metrics.ts and regenerate. -->

\`reasoning-jury run --metrics-port <n>\` serves, on that port (\`--metrics-host\`, default
\`0.0.0.0\`; \`0\` picks a free port and prints it on stderr):

| path | answers |
| --- | --- |
| \`/metrics\` | the metrics below in the Prometheus text format |
| \`/healthz\` | 200 \`ok\` while the process runs (liveness) |
| \`/readyz\` | 200 \`ready\` while the run can make progress; 503 with the reason on one line while it is starting, its source is not connected, every model endpoint is down, or it is shutting down or finished (readiness) |

The endpoint is served by the main thread, which only relays progress, so the probes answer at
once even while the judging thread is busy; a scrape asks the judging thread for its numbers.
Counters are those of this process since it started. When the run ends, the last numbers (the
ones the summary prints) keep being served for \`--metrics-linger\` seconds, so a batch Job's
final scrape sees them; SIGTERM ends that wait.

Names follow the Prometheus conventions: the \`reasoning_jury_\` prefix, \`_total\` on counters,
base units (\`_seconds\`, \`_usd\` for dollars), snake_case labels. Model metrics are labelled by
\`endpoint\` (the config's endpoint name) and \`model\`. Besides these, the judging thread exports
prom-client's default Node.js and process metrics (\`process_*\`, \`nodejs_*\`: heap, event loop
delay, GC), unprefixed as is customary.

| metric | type | labels | meaning |
| --- | --- | --- | --- |
${rows.join('\n')}
`;
}
