/**
 * Opt-in (issue 18): the jury against a model server this project did not write,
 * llama-cpp-python's OpenAI-compatible server serving the SmolLM2-135M file the project fetches.
 * Skipped unless RJ_LLAMA_CPP_PYTHON names a python that has `llama_cpp.server`: PyPI offers only
 * the source package, and building it took 30 min of wall time here (15 CPU-min, 2 shared cores),
 * far over the suite's budget. To run it:
 *
 *   python3 -m venv /tmp/lcp && /tmp/lcp/bin/pip install 'llama-cpp-python[server]==0.3.36'
 *   RJ_LLAMA_CPP_PYTHON=/tmp/lcp/bin/python npx vitest run test/integration/llama-cpp-python.test.ts
 *
 * What it checks: `response_format: auto` settles on a dialect that server takes (it refuses
 * json_schema), and 3 jurors + consolidation and a deliberation end with schema-valid verdicts.
 * A 135M model judges badly, so verdict content is not asserted, only its shape and that the
 * calls went through.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import YAML from 'yaml';
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VerdictRow } from '../../schemas/outputs.js';
import { LocalObjectStore } from '../../src/pipeline/storage/object-store.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { runCli } from '../helpers/cli.js';
import { tempDir, writeJsonl } from '../helpers/run-setup.js';
import { testModelPath } from '../local/model.js';

const PYTHON = process.env.RJ_LLAMA_CPP_PYTHON;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Polls GET /v1/models until the server answers; it loads the model first. */
async function waitReady(url: string, server: ChildProcess): Promise<void> {
  for (;;) {
    if (server.exitCode !== null) throw new Error(`llama_cpp.server exited with ${server.exitCode}`);
    try {
      if ((await fetch(`${url}/models`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

describe.skipIf(!PYTHON)('a real llama-cpp-python server', () => {
  const dir = tempDir('llama-cpp-python');
  let server: ChildProcess;
  let url: string;
  let stderr = '';

  beforeAll(async () => {
    const model = await testModelPath();
    const port = await freePort();
    url = `http://127.0.0.1:${port}/v1`;
    server = spawn(PYTHON!, ['-m', 'llama_cpp.server', '--model', model, '--host', '127.0.0.1', '--port', String(port), '--n_ctx', '8192', '--model_alias', 'smollm2'], { stdio: ['ignore', 'ignore', 'pipe'] });
    server.stderr!.on('data', (d) => (stderr += d));
    await waitReady(url, server);
  }, 600_000);

  afterAll(() => {
    server?.kill('SIGTERM');
  });

  const config = (mode: 'consolidation' | 'deliberation'): string => {
    const seat = (id: string) => ({ id, endpoint: 'lcp', model: 'smollm2', temperature: 0 });
    const cfg = {
      // One slot, as that server decodes one request at a time (README, "Slow servers and deadlines").
      endpoints: { lcp: { kind: 'openai', base_url: url, response_format: 'auto', max_concurrency: 1, timeout_ms: 600_000 } },
      jurors: ['a', 'b', 'c'].map((s) => seat(`jury-${s}`)),
      consolidator: seat('consolidator'),
      ...(mode === 'deliberation' ? { moderator: seat('moderator'), deliberation: { max_turns: 3 } } : {}),
      mode,
      max_tokens: { phase1: 384, consolidation: 384, moderator: 256, juror_turn: 128, extraction: 384 },
      prices: { smollm2: { input_per_mtok: 0, output_per_mtok: 0 } },
    };
    const path = join(dir, `${mode}.yaml`);
    writeFileSync(path, YAML.stringify(cfg));
    return path;
  };

  for (const mode of ['consolidation', 'deliberation'] as const) {
    it(`${mode}: auto picks a dialect the server takes, and the verdicts are schema-valid`, async () => {
      const input = writeJsonl(join(dir, `${mode}.jsonl`), syntheticRecords(2, { seed: 7, maxSteps: 4 }));
      const out = join(dir, `out-${mode}`);
      // A 135M model on two shared cores decodes ~30 tokens/s and nothing is written until the
      // range commits; the server's own log is the progress to watch.
      const serverLog = () => stderr.length;
      const res = await runCli(['run', '-c', config(mode), '-i', input, '-o', out, '--progress', 'none'], { progress: () => serverLog(), stallMs: 600_000 });
      expect(res.code, `${res.stderr}\n--- server ---\n${stderr.slice(-2000)}`).toBe(0);
      expect(res.stderr).toMatch(/response_format auto chose (json_object_schema|guided_json|json_object)/);
      const rows = await readCommittedRows(new LocalObjectStore(out), 'verdicts');
      expect(rows).toHaveLength(2);
      for (const r of rows) {
        expect(() => VerdictRow.parse(r)).not.toThrow();
        expect(r.tokens_in).toBeGreaterThan(0);
      }
    }, 1_800_000);
  }
});
