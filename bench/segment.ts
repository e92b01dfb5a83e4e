import { segmentText } from '../src/segment/index.js';
import { benchRecords, fmt } from './common.js';

/** Segmentation throughput (MB/s of trace text) for the paper's regex and plain blank lines. */
export function benchSegmentation(): string {
  const { records, source } = benchRecords(2000);
  const texts = records.map((r) => r.trace ?? (r.steps ?? []).join('\n\n'));
  const bytes = texts.reduce((a, t) => a + Buffer.byteLength(t), 0);
  const lines = [`Segmentation over ${records.length} traces (${source}), ${fmt(bytes / 1e6)} MB per pass:`, '', '| mode | MB/s | steps per trace |', '|---|---|---|'];
  for (const mode of ['regex', 'blank_line'] as const) {
    let steps = 0;
    for (const t of texts) steps += segmentText(t, mode).length; // warm-up
    const passes = 20;
    const t0 = process.hrtime.bigint();
    for (let p = 0; p < passes; p++) for (const t of texts) segmentText(t, mode);
    const secs = Number(process.hrtime.bigint() - t0) / 1e9;
    lines.push(`| ${mode} | ${fmt((bytes * passes) / 1e6 / secs, 1)} | ${fmt(steps / texts.length, 1)} |`);
  }
  return lines.join('\n');
}
