import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildGoldIndex } from '../../src/sim/gold.js';
import { parseProfile, type ProfileFileInput } from '../../src/sim/profile.js';
import { startSimulator, type RunningSimulator } from '../../src/sim/server.js';
import { client, ended, inputLine, jsonl, pollUntil, readLines, submit, type OutputLine } from './batch-helpers.js';
import { phase1Request, synthRecords } from './helpers.js';

/** scripts/sim-run-batch.mjs, the `vllm run-batch` stand-in of the `command` batch dialect. */

const run = promisify(execFile);
const records = synthRecords(6, { steps: 6, seed: 'run-batch' });
const PROFILE: ProfileFileInput = {
  seed: 3,
  models: { 'juror-a': { recall: 0.8, rate_429: 0.3, rate_fenced_json: 0.3 }, 'juror-b': { recall: 0.5 } },
  batch: { completion_delay_ms: 0 },
};
const lines = records.flatMap((r, i) => [inputLine(`r${i}/a`, phase1Request(r, 'juror-a', 7)), inputLine(`r${i}/b`, phase1Request(r, 'juror-b', 8))]);
const dir = mkdtempSync(join(tmpdir(), 'sim-run-batch-'));
const paths = { input: join(dir, 'in.jsonl'), profile: join(dir, 'profile.json'), gold: join(dir, 'gold.jsonl') };
let sim: RunningSimulator;
/** custom_id -> the body the simulator's own Batch API gives the line */
const expected = new Map<string, string>();

function script(args: string[]) {
  return run(process.execPath, ['scripts/sim-run-batch.mjs', ...args], { encoding: 'utf8' });
}

function outputOf(path: string): OutputLine[] {
  return readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as OutputLine);
}

beforeAll(async () => {
  writeFileSync(paths.input, jsonl(lines));
  writeFileSync(paths.profile, JSON.stringify(PROFILE));
  writeFileSync(paths.gold, jsonl(records));
  sim = await startSimulator({ profile: parseProfile(PROFILE), gold: buildGoldIndex(records) });
  const c = client(sim.url);
  const { batch } = await pollUntil(c, (await submit(c, lines)).id, ended);
  for (const l of await readLines(c, batch.output_file_id)) expected.set(l.custom_id, JSON.stringify(l.response!.body));
  expect(expected.size).toBe(lines.length);
});
afterAll(async () => {
  await sim.close();
});

/** juror-a's lines answered as the Batch API answers them; juror-b's refused as vLLM refuses another model. */
function expectServedAs(out: OutputLine[]): void {
  expect(out.map((l) => l.custom_id)).toEqual(lines.map((l) => l.custom_id));
  for (const l of out) {
    if (l.custom_id.endsWith('/a')) {
      expect(l).toMatchObject({ response: { status_code: 200 }, error: null });
      expect(JSON.stringify(l.response!.body)).toBe(expected.get(l.custom_id));
    } else {
      expect(l).toMatchObject({ response: { status_code: 404, body: null }, error: { object: 'error', code: 'model_not_found' } });
    }
  }
}

describe('scripts/sim-run-batch.mjs', () => {
  it('answers in-process with the bodies the Batch API gives, and refuses other models as vLLM does', async () => {
    const out = join(dir, 'out-local.jsonl');
    const { stderr } = await script(['-i', paths.input, '-o', out, '--model', 'juror-a', '--profile', paths.profile, '--gold', paths.gold]);
    expect(stderr).toContain('6 of 12 requests answered');
    expectServedAs(outputOf(out));
    // Stable: a rerun writes the same file.
    const again = join(dir, 'out-local-2.jsonl');
    await script(['-i', paths.input, '-o', again, '--model', 'juror-a', '--profile', paths.profile, '--gold', paths.gold]);
    expect(readFileSync(again, 'utf8')).toBe(readFileSync(out, 'utf8'));
  });

  it('with --url goes through a running simulator Batch API, making no online chat call', async () => {
    const before = sim.batchStats().accepted.length;
    const out = join(dir, 'out-url.jsonl');
    await script(['-i', paths.input, '-o', out, '--model', 'juror-a', '--url', sim.url]);
    expectServedAs(outputOf(out));
    const stats = sim.batchStats();
    expect(stats.online.chat_calls).toBe(0);
    expect(stats.accepted.slice(before).map((b) => b.custom_ids)).toEqual([lines.filter((l) => l.custom_id.endsWith('/a')).map((l) => l.custom_id)]);
  });

  it('exits 1 on missing flags or a bad input file', async () => {
    await expect(script(['-i', paths.input])).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('-i and -o are required') });
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, '{"custom_id": "x"}\n');
    await expect(script(['-i', bad, '-o', join(dir, 'never.jsonl')])).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('line 1') });
  });
});
