import cliProgress from 'cli-progress';
import type { BatchStats } from '../llm/providers/batch/index.js';
import type { StageCounters } from '../pipeline/stage.js';
import { logger, type LogFormat } from '../util/log.js';

/**
 * How progress is shown: a bar on a terminal, a plain line every few seconds otherwise. With
 * --log-format json the line is a JSON event instead (component `progress`, the counters as
 * fields), so stderr stays one JSON object a line; the bar is refused there (run.ts).
 */
export interface ProgressView {
  /** `batch`: batch mode's counters (the providers'), shown after the stage's; absent online */
  update(c: StageCounters, batch?: BatchStats): void;
  stop(c: StageCounters, batch?: BatchStats): void;
}

const compact = (n: number) => (n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)}k` : String(n));
const done = (c: StageCounters) => c.judged + c.dead_letters;
/** ", PAUSED (endpoint down) 12.0 s" while paused; ", paused 2× 31.4 s" after pauses; else nothing */
export const pauseText = (c: Pick<StageCounters, 'pauses' | 'paused_ms' | 'paused'>): string =>
  c.paused ? `, PAUSED (endpoint down) ${(c.paused_ms / 1000).toFixed(1)} s` : c.pauses > 0 ? `, paused ${c.pauses}x ${(c.paused_ms / 1000).toFixed(1)} s` : '';

/** "42s", "4m12s", "3h05m": how long the oldest request has waited */
export function waitText(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor(s / 60) % 60).padStart(2, '0')}m`;
}

const count = (n: number) => n.toLocaleString('en-US');

/**
 * Batch mode's part of the progress line: "batches 3 sent / 1 live / 2 done, 1,204 requests
 * waiting (oldest 4m12s)"; failed or expired batches are named only when there are some.
 */
export function batchText(b: BatchStats): string {
  const failed = b.failed > 0 ? ` / ${count(b.failed)} failed or expired` : '';
  const oldest = b.waiting > 0 ? ` (oldest ${waitText(b.oldest_wait_ms)})` : '';
  return `batches ${count(b.submitted)} sent / ${count(b.in_progress)} live / ${count(b.completed)} done${failed}, ${count(b.waiting)} requests waiting${oldest}`;
}

const batchPart = (b: BatchStats | undefined, sep: string): string => (b ? `${sep}${batchText(b)}` : '');

const EVERY_MS = 5000;

export function createProgress(
  mode: 'auto' | 'bar' | 'log' | 'none',
  total: number | undefined,
  opts: { format?: LogFormat; stream?: NodeJS.WriteStream } = {},
): ProgressView {
  const stream = opts.stream ?? process.stderr;
  const json = opts.format === 'json';
  const resolved = mode === 'auto' ? (stream.isTTY && !json ? 'bar' : 'log') : mode;
  const t0 = Date.now();
  const rate = (c: StageCounters) => done(c) / Math.max(0.001, (Date.now() - t0) / 1000);
  if (resolved === 'none') return { update() {}, stop() {} };
  if (resolved === 'log' && json) return jsonProgress(total, rate);
  if (resolved === 'log') {
    let last = 0;
    const line = (c: StageCounters, b?: BatchStats) =>
      stream.write(
        `[run] ${done(c)}${total ? `/${total}` : ''} done (${c.clean} clean, ${c.degraded} degraded, ${c.no_verdict} no verdict, ${c.dead_letters} dead letters), ` +
          `${c.in_flight} in flight, ${c.ranges_committed} ranges committed, ${rate(c).toFixed(1)} rec/s, ${compact(c.tokens_in + c.tokens_out)} tokens, $${c.cost_usd.toFixed(4)}${pauseText(c)}${batchPart(b, ', ')}\n`,
      );
    return {
      update(c, b) {
        if (Date.now() - last >= EVERY_MS) {
          last = Date.now();
          line(c, b);
        }
      },
      stop: line,
    };
  }
  const bar = new cliProgress.SingleBar(
    {
      stream,
      format: total
        ? ' {bar} {percentage}% | {value}/{total} | {rate} rec/s | {inflight} in flight | {tokens} tok | ${cost} | ETA {eta_formatted}{paused}{batch}'
        : ' {value} records | {rate} rec/s | {inflight} in flight | {tokens} tok | ${cost}{paused}{batch}',
      hideCursor: true,
      etaBuffer: 200,
    },
    cliProgress.Presets.shades_classic,
  );
  const payload = (c: StageCounters, b?: BatchStats) => ({
    rate: rate(c).toFixed(1),
    inflight: c.in_flight,
    tokens: compact(c.tokens_in + c.tokens_out),
    cost: c.cost_usd.toFixed(4),
    paused: pauseText(c).replace(/^,/, ' |'),
    batch: batchPart(b, ' | '),
  });
  bar.start(total ?? 0, 0, payload({ in_flight: 0, tokens_in: 0, tokens_out: 0, cost_usd: 0, pauses: 0, paused_ms: 0, paused: false } as StageCounters));
  return {
    update: (c, b) => bar.update(done(c), payload(c, b)),
    stop: (c, b) => {
      bar.update(done(c), payload(c, b));
      bar.stop();
    },
  };
}

/** Progress as JSON events every few seconds, and a `finished` event with the final counters. */
function jsonProgress(total: number | undefined, rate: (c: StageCounters) => number): ProgressView {
  const log = logger('progress');
  const fields = (c: StageCounters, b?: BatchStats) => ({ done: done(c), ...(total ? { total } : {}), rate: Number(rate(c).toFixed(1)), ...c, cost_usd: Number(c.cost_usd.toFixed(6)), ...(b ? { batch: b } : {}) });
  let last = 0;
  return {
    update(c, b) {
      if (Date.now() - last < EVERY_MS) return;
      last = Date.now();
      log.info('progress', fields(c, b));
    },
    stop: (c, b) => log.info('finished', fields(c, b)),
  };
}
