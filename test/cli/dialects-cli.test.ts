/**
 * The CLI against a llama-cpp-python-like server (test/llm/helpers/dialect-servers.ts): with
 * `response_format: auto` one stderr line says which dialect was chosen and the verdict is
 * sound; with `json_schema`, which that server refuses with a 500, each juror is tried once and
 * the verdict's error names the setting to change.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { Verdict } from '../../schemas/verdict.js';
import { defaultConfigInput } from '../../src/config/load.js';
import { buildGoldIndex, createSimProvider } from '../../src/sim/index.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { profileWith } from '../deliberation/helpers.js';
import { runCli } from '../helpers/cli.js';
import { startDialectServer, type DialectServer } from '../llm/helpers/dialect-servers.js';

const record = syntheticRecords(1, { seed: 31, minSteps: 4, maxSteps: 5 })[0]!;

describe('reasoning-jury judge against a llama-cpp-python-like server', () => {
  let server: DialectServer;
  let dir: string;
  beforeAll(async () => {
    server = await startDialectServer('llama-cpp-python', createSimProvider({ profile: profileWith(), gold: buildGoldIndex([record]) }));
    dir = mkdtempSync(join(tmpdir(), 'rj-dialect-cli-'));
  });
  afterAll(() => server.close());

  function config(responseFormat: string): string {
    const path = join(dir, `jury-${responseFormat}.yaml`);
    const d = defaultConfigInput();
    writeFileSync(
      path,
      YAML.stringify({
        endpoints: { llamacpp: { base_url: server.url, max_concurrency: 4, max_retries: 4, backoff_base_ms: 10, backoff_max_ms: 50, response_format: responseFormat } },
        jurors: d.jurors!.map((j) => ({ ...j, endpoint: 'llamacpp' })),
        consolidator: { ...d.consolidator!, endpoint: 'llamacpp' },
        mode: 'consolidation',
        cache: { enabled: false, dir: join(dir, 'cache') },
      }),
    );
    return path;
  }

  it('auto: one line names the dialect, every juror and the consolidator succeed', async () => {
    const before = server.requests.length;
    const res = await runCli(['judge', '--config', config('auto')], { stdin: JSON.stringify(record) });
    expect(res.code).toBe(0);
    const chosen = res.stderr.split('\n').filter((l) => l.includes('response_format auto chose'));
    expect(chosen).toEqual([expect.stringContaining('endpoint "llamacpp": response_format auto chose json_object_schema (json_schema: rejected, HTTP 500 "response_format.type")')]);
    const v = Verdict.parse(JSON.parse(res.stdout));
    expect(v.error).toBeNull();
    expect(v.degraded).toBe(false);
    expect(v.phase1_judgements.every((j) => j.ok)).toBe(true);
    const mine = server.requests.slice(before);
    // Two probes (json_schema refused, json_object_schema taken), then 3 jurors + consolidator.
    expect(mine.map((r) => r.status)).toEqual([500, 200, 200, 200, 200, 200]);
  });

  it('json_schema: each juror tried once, the error names endpoints.llamacpp.response_format', async () => {
    const before = server.requests.length;
    const res = await runCli(['judge', '--config', config('json_schema')], { stdin: JSON.stringify(record) });
    const v = Verdict.parse(JSON.parse(res.stdout));
    expect(v.error).toContain('change endpoints.llamacpp.response_format');
    for (const j of v.phase1_judgements) expect(j.error).toMatch(/failed after 1 attempt\(s\): HTTP 500: the server rejected request field "response_format\.type"/);
    expect(server.requests.length - before).toBe(3);
  });
});
