/**
 * Issue 35 point 4: `run --rejudge no-verdict` judges again, without deleting the output, the
 * committed ranges whose records were left without a verdict. The jurors are a scripted
 * OpenAI-compatible server reached through the real `openai` client: on the first run its
 * replies for two records are never valid JSON (so those records end without a verdict); after
 * the "fix" every reply is valid. The re-judge is held at its first judging call, so the test
 * sees the output between retraction and re-commit: the old ranges are gone (manifest and
 * files), the clean ones untouched; afterwards every record has a verdict, each once.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import YAML from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalObjectStore } from '../../src/pipeline/storage/object-store.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { runCli } from '../helpers/cli.js';
import { pyenvPython, tempDir, writeJsonl } from '../helpers/run-setup.js';
import { completion } from '../llm/helpers/scripted-server.js';

const MARK = 'BROKEN-REPLY-HERE';

interface Jury {
  url: string;
  /** judging calls seen (a prompt with a trace in it) */
  judging: number;
  broken: boolean;
  /** set: judging calls wait until it resolves */
  hold: Promise<void> | null;
  firstHeld: Promise<void>;
  close(): Promise<void>;
}

/** Jurors that find nothing; while `broken`, no reply about a marked record is JSON. */
async function startJury(): Promise<Jury> {
  let seen!: () => void;
  const jury: Jury = { url: '', judging: 0, broken: true, hold: null, firstHeld: new Promise<void>((r) => (seen = r)), close: async () => undefined };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      if (req.method !== 'POST') return void res.writeHead(404).end();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model: string; messages: unknown };
      const prompt = JSON.stringify(body.messages);
      if (prompt.includes('[STEP-1]')) {
        jury.judging += 1;
        if (jury.hold) {
          seen();
          await jury.hold;
        }
      }
      const content = jury.broken && prompt.includes(MARK) ? 'I would rather not say.' : '{"negatives": []}';
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(completion({ content, tokens_in: 50, tokens_out: 5 }, body.model)));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  jury.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  jury.close = () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r())));
  return jury;
}

const juries: Jury[] = [];
afterEach(async () => {
  for (const j of juries.splice(0)) await j.close();
});

function config(dir: string, url: string): string {
  const path = join(dir, 'jury.yaml');
  writeFileSync(
    path,
    YAML.stringify({
      endpoints: { s: { base_url: url, max_concurrency: 8, max_retries: 1, backoff_base_ms: 10, backoff_max_ms: 50 } },
      jurors: ['a', 'b', 'c'].map((x, i) => ({ id: `jury-${i}`, endpoint: 's', model: `juror-${x}` })),
      consolidator: { id: 'consolidator', endpoint: 's', model: 'consolidator' },
      cache: { enabled: false, dir: join(dir, 'cache') },
    }),
  );
  return path;
}

const manifestNames = (out: string) => readdirSync(join(out, '_commits')).filter((f) => f.endsWith('.json')).sort();
const read = (out: string, name: string) => readFileSync(join(out, '_commits', name), 'utf8');

describe('run --rejudge no-verdict', () => {
  it('retracts the ranges holding records without a verdict and commits them again: every record once, with a verdict', async () => {
    const dir = tempDir('rejudge');
    const jury = await startJury();
    juries.push(jury);
    // Records 4 and 9 (ranges 3-5 and 9-11 of four) get replies that are never JSON.
    const records = syntheticRecords(12, { seed: 21 }).map((r, i) => (i === 4 || i === 9 ? { ...r, problem: `${r.problem} ${MARK}` } : r));
    const input = writeJsonl(join(dir, 'in.jsonl'), records);
    const out = join(dir, 'out');
    const args = ['run', '-c', config(dir, jury.url), '-i', input, '-o', out, '--range-records', '3', '--concurrency', '4', '--progress', 'none'];
    const first = await runCli(args);
    expect(first.code, first.stderr).toBe(0);
    const store = new LocalObjectStore(out);
    const before = await readCommittedRows(store, 'verdicts');
    expect(before.filter((v) => v.error !== null).map((v) => v.record_id).sort()).toEqual([records[4]!.id, records[9]!.id].sort());
    const names = manifestNames(out);
    expect(names).toHaveLength(4);
    const clean = names.filter((_, i) => i === 0 || i === 2);
    const kept = new Map(clean.map((n) => [n, read(out, n)]));
    const oldParts = names.filter((n) => !clean.includes(n)).flatMap((n) => (JSON.parse(read(out, n)) as { files: Array<{ key: string }> }).files.map((f) => f.key));

    // The server is fixed; the re-judge waits at its first judging call until the test has looked.
    jury.broken = false;
    let release!: () => void;
    jury.hold = new Promise<void>((r) => (release = r));
    const judged = jury.judging;
    const rerun = runCli([...args, '--rejudge', 'no-verdict']);
    await jury.firstHeld;
    // Between retraction and re-commit: only the clean ranges, as they were; no file of the old ones.
    expect(manifestNames(out)).toEqual(clean);
    for (const k of oldParts) expect(existsSync(join(out, k)), k).toBe(false);
    const listed = await runCli(['shards', 'list', out, '--table', 'verdicts', '--format', 'parquet']);
    expect(listed.stdout.trim().split('\n')).toHaveLength(2);
    release();
    const r = await rerun;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/--rejudge no-verdict: 2 verdict\(s\) without a verdict in 2 committed range\(s\)/);
    expect(r.stdout).toMatch(/already committed \(skipped\)\s+6/);
    // Only the retracted ranges' records were judged again (4 calls each: 3 jurors + consolidator).
    expect(jury.judging - judged).toBe(6 * 4);
    expect(manifestNames(out)).toEqual(names); // committed again under the same names
    for (const [n, text] of kept) expect(read(out, n)).toBe(text);
    const after = await readCommittedRows(store, 'verdicts');
    expect(after.map((v) => v.record_id).sort()).toEqual(records.map((x) => x.id).sort());
    expect(after.every((v) => v.error === null)).toBe(true);
    expect((await runCli(['shards', 'verify', out])).code).toBe(0);
    const python = pyenvPython();
    if (python) {
      const list = join(dir, 'listed.txt');
      writeFileSync(list, (await runCli(['shards', 'list', out, '--table', 'verdicts', '--format', 'parquet'])).stdout);
      const seen = JSON.parse(execFileSync(python, [join(process.cwd(), 'test/py/read_listed.py'), list], { encoding: 'utf8' })) as Record<string, { rows: number; ids: string[] }>;
      for (const reader of ['pyarrow', 'duckdb', 'polars']) expect(seen[reader]).toEqual({ rows: 12, ids: records.map((x) => x.id).sort() });
    }
    // Nothing left to judge again.
    const again = await runCli([...args, '--rejudge', 'no-verdict']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/--rejudge no-verdict: no committed verdict is without a verdict/);
    expect(again.stdout).toMatch(/already committed \(skipped\)\s+12/);
  }, 300_000);

  it('is refused with one line for a kafka:// input, and with --no-resume', async () => {
    const dir = tempDir('rejudge-refused');
    const bad = await runCli(['run', '-i', 'kafka://127.0.0.1:1/topic?group=g', '-o', join(dir, 'out'), '--rejudge', 'no-verdict', '--progress', 'none']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--rejudge: a kafka:\/\/ input is not read again/);
    const fresh = await runCli(['run', '-o', join(dir, 'out3'), '--rejudge', 'no-verdict', '--no-resume', '--progress', 'none']);
    expect(fresh.code).toBe(2);
    expect(fresh.stderr).toMatch(/--rejudge judges committed ranges again, so it cannot go with --no-resume/);
    const flag = await runCli(['run', '-o', join(dir, 'out2'), '--rejudge', 'everything', '--progress', 'none']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/--rejudge must be no-verdict \| degraded \(got "everything"\)/);
  }, 120_000);
});
