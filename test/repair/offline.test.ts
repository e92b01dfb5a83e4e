/**
 * `repair run | export | import` over committed shards: run commits a repairs table per range
 * (resumable, each row once); export writes OpenAI Batch requests; the batch's results, served
 * here by the same simulator the run used, imported back fill the same table with the same
 * answers, and a request without a result line becomes a row with `error`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { describe, expect, it } from 'vitest';
import { LocalObjectStore } from '../../src/pipeline/storage/object-store.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { buildGoldIndex, createSimProvider, loadProfileFile } from '../../src/sim/index.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import type { ChatRequest } from '../../src/llm/types.js';
import { runCli } from '../helpers/cli.js';
import { LONG_TEST_MS } from '../helpers/progress.js';
import { fastSimConfig, tempDir, writeJsonl } from '../helpers/run-setup.js';

describe('repair over committed shards', () => {
  it('run, export -> batch -> import round trip', async () => {
    const dir = tempDir('repair-offline');
    const records = syntheticRecords(120, { seed: 21 }).map((r, i) => ({ ...r, answer: i % 3 ? /(\d+)\s*$/.exec(r.final_solution!)![1]! : '1001' }));
    const input = writeJsonl(join(dir, 'in.jsonl'), records);
    const base = { mode: 'single', jurors: [{ id: 'jury-0', endpoint: 'sim', model: 'sim-juror-a' }], input: { mapping: { reference_answer: 'answer' } } };
    const plain = fastSimConfig(dir, base);
    const out = join(dir, 'out');
    const judged = await runCli(['run', '--config', plain, '--input', input, '--out', out, '--range-records', '40', '--progress', 'none']);
    expect(judged.code, judged.stderr).toBe(0);
    const withRepair = join(dir, 'repair.yaml');
    writeFileSync(withRepair, YAML.stringify({ ...YAML.parse(readFileSync(plain, 'utf8')), repair: { generator: { id: 'gen', endpoint: 'sim', model: 'sim-generator' } } }));

    const rep1 = join(dir, 'rep1');
    const r1 = await runCli(['repair', 'run', out, '-c', withRepair, '-o', rep1]);
    expect(r1.code, r1.stderr).toBe(0);
    const rows1 = await readCommittedRows(new LocalObjectStore(rep1), 'repairs');
    const defects = await readCommittedRows(new LocalObjectStore(out), 'defects');
    const gated = new Set(defects.filter((d) => d.impact !== 'neutral').map((d) => String(d.record_id)));
    expect(gated.size).toBeGreaterThan(10);
    expect(rows1.length).toBe(2 * gated.size);
    expect(rows1.every((r) => r.error === null && r.reference_answer !== null)).toBe(true);
    const again = await runCli(['repair', 'run', out, '-c', withRepair, '-o', rep1]);
    expect(again.stdout).toMatch(/already in --out, skipped: 3\)/);
    expect(await readCommittedRows(new LocalObjectStore(rep1), 'repairs')).toHaveLength(rows1.length);

    const reqFile = join(dir, 'requests.jsonl');
    const ex = await runCli(['repair', 'export', out, '-c', withRepair, '--to', reqFile]);
    expect(ex.code, ex.stderr).toBe(0);
    const requests = readFileSync(reqFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { custom_id: string; method: string; url: string; body: ChatRequest });
    expect(requests).toHaveLength(rows1.length);
    expect(new Set(requests.map((q) => q.custom_id)).size).toBe(requests.length);
    for (const q of requests) {
      expect(q.method).toBe('POST');
      expect(q.url).toBe('/v1/chat/completions');
      expect(q.body.model).toBe('sim-generator');
      expect(q.body.messages.map((m) => m.role)).toEqual(['system', 'user']);
      expect(q.body.max_tokens).toBe(16384);
    }

    // The batch, served by the simulator the run used (same profile, same reference answers).
    const profile = loadProfileFile(join(dir, 'profile.yaml'));
    const provider = createSimProvider({ profile, gold: buildGoldIndex(records.map((r) => ({ ...r, reference_answer: r.answer }))), latency: 'instant' });
    const lines: string[] = [];
    for (const q of requests.slice(1)) {
      const res = await provider.complete(q.body, new AbortController().signal);
      lines.push(JSON.stringify({ id: `batch_req_${lines.length}`, custom_id: q.custom_id, response: { status_code: 200, body: { choices: [{ index: 0, message: { role: 'assistant', content: res.content }, finish_reason: res.finish_reason ?? 'stop' }], usage: { prompt_tokens: res.tokens_in, completion_tokens: res.tokens_out } } }, error: null }));
    }
    const resFile = join(dir, 'results.jsonl');
    writeFileSync(resFile, lines.join('\n') + '\n');
    const rep2 = join(dir, 'rep2');
    const im = await runCli(['repair', 'import', out, '-c', withRepair, '--from', resFile, '-o', rep2]);
    expect(im.code, im.stderr).toBe(0);
    const rows2 = await readCommittedRows(new LocalObjectStore(rep2), 'repairs');
    expect(rows2).toHaveLength(rows1.length);
    const key = (r: Record<string, unknown>) => `${String(r.record_id)}/${String(r.condition)}/${String(r.attempt)}`;
    const byKey = new Map(rows1.map((r) => [key(r), r]));
    const missing = rows2.filter((r) => r.error !== null);
    expect(missing).toHaveLength(1);
    expect(missing[0]!.error).toMatch(/no result/);
    expect(im.stderr).toMatch(/1 retry has no result line in .*results\.jsonl: committed as error rows .*import the complete results file into the same --out to replace them/);
    // The complete file, imported into the same --out, replaces the range with the error row.
    const first = requests[0]!;
    const res0 = await provider.complete(first.body, new AbortController().signal);
    const full = join(dir, 'results-full.jsonl');
    writeFileSync(full, [JSON.stringify({ id: 'batch_req_x', custom_id: first.custom_id, response: { status_code: 200, body: { choices: [{ index: 0, message: { role: 'assistant', content: res0.content }, finish_reason: res0.finish_reason ?? 'stop' }], usage: { prompt_tokens: res0.tokens_in, completion_tokens: res0.tokens_out } } }, error: null }), ...lines].join('\n') + '\n');
    const im2 = await runCli(['repair', 'import', out, '-c', withRepair, '--from', full, '-o', rep2]);
    expect(im2.code, im2.stderr).toBe(0);
    expect(im2.stderr).toMatch(/1 range\(s\) of .* had retries without a result that --from now has: replaced/);
    expect(im2.stderr).not.toMatch(/no result line/);
    const rows3 = await readCommittedRows(new LocalObjectStore(rep2), 'repairs');
    expect(rows3).toHaveLength(rows1.length);
    expect(rows3.filter((r) => r.error !== null)).toEqual([]);
    expect(new Set(rows3.map(key)).size).toBe(rows3.length);
    expect((await runCli(['shards', 'verify', rep2])).code).toBe(0);
    for (const r of rows2.filter((x) => x.error === null)) {
      const a = byKey.get(key(r))!;
      for (const col of ['retry_text', 'extracted_answer', 'answer_source', 'correct', 'original_correct', 'prompt_hash', 'gate', 'tokens_out']) expect(r[col], `${key(r)} ${col}`).toEqual(a[col]);
    }
  }, LONG_TEST_MS);
});
