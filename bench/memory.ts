import { execFileSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { syntheticRecords } from '../src/sim/synthetic.js';
import { fmt } from './common.js';

async function writeInput(path: string, n: number): Promise<void> {
  const out = createWriteStream(path);
  for (let i = 0; i < n; i += 1000) {
    const chunk = syntheticRecords(Math.min(1000, n - i), { seed: 1000 + i, prefix: `mem${i}` });
    if (!out.write(chunk.map((r) => JSON.stringify(r)).join('\n') + '\n')) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

/**
 * Peak RSS of the whole stage (JSONL source -> jury with instant in-process jurors -> Parquet
 * shards) at 10k and 100k records. Flat memory means the ratio stays near 1.
 */
export async function benchMemory(sizes = [10_000, 100_000]): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'rj-mem-'));
  const child = fileURLToPath(new URL('./memory-child.js', import.meta.url));
  const rows: Array<{ n: number; rss: number; secs: number }> = [];
  try {
    for (const n of sizes) {
      const input = join(dir, `in-${n}.jsonl`);
      await writeInput(input, n);
      const res = JSON.parse(execFileSync(process.execPath, [child, input, join(dir, `out-${n}`)], { encoding: 'utf8', maxBuffer: 1 << 20 }));
      if (res.committed !== n) throw new Error(`memory bench: ${res.committed} of ${n} records committed`);
      rows.push({ n, rss: res.peak_rss_mb, secs: res.seconds });
      rmSync(input);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const lines = ['Stage memory, JSONL in -> 3 instant jurors + consolidation -> Parquet shards, concurrency 16, ranges of 1,000:', '', '| records | peak RSS (MB) | seconds | records/s |', '|---|---|---|---|'];
  for (const r of rows) lines.push(`| ${r.n.toLocaleString('en-US')} | ${fmt(r.rss, 1)} | ${fmt(r.secs, 1)} | ${fmt(r.n / r.secs, 0)} |`);
  if (rows.length >= 2) lines.push('', `Ratio of peak RSS, ${rows.at(-1)!.n.toLocaleString('en-US')} vs ${rows[0]!.n.toLocaleString('en-US')}: **${fmt(rows.at(-1)!.rss / rows[0]!.rss, 3)}** (target ≤ 1.1; each ≤ 300 MB).`);
  return lines.join('\n');
}
