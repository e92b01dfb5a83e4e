import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { loadConfigFile, parseConfig } from '../src/config/load.js';
import { modelJurors } from '../src/jury/seats.js';
import { packageRoot } from '../src/util/paths.js';

const EXAMPLE = join(packageRoot(), 'examples', 'jury.yaml');

describe('examples/jury.yaml', () => {
  it('loads with the real loader and has the seats and endpoints it advertises', () => {
    const c = loadConfigFile(EXAMPLE);
    // "a commented example with vLLM, Ollama, OpenRouter and the simulator" (README)
    expect(Object.keys(c.endpoints)).toEqual(['sim', 'vllm', 'ollama', 'openrouter']);
    // Written `sim-profile.yaml`: paths in a config are relative to the config file (issue 13).
    expect(c.endpoints.sim).toMatchObject({ kind: 'simulator', profile: join(packageRoot(), 'examples', 'sim-profile.yaml') });
    expect(c.endpoints.vllm).toMatchObject({ kind: 'openai', base_url: 'http://127.0.0.1:8000/v1', api_key_env: 'VLLM_API_KEY', response_format: 'json_schema' });
    expect(c.endpoints.ollama).toMatchObject({ kind: 'openai', base_url: 'http://127.0.0.1:11434/v1' });
    expect(c.endpoints.openrouter).toMatchObject({ kind: 'openai', base_url: 'https://openrouter.ai/api/v1', api_key_env: 'OPENROUTER_API_KEY' });
    // Phase 1: three simulated jurors; Phase 2: consolidation by a simulated consolidator.
    expect(modelJurors(c).map((j) => [j.id, j.endpoint, j.model])).toEqual([
      ['jury-0', 'sim', 'sim-juror-a'],
      ['jury-1', 'sim', 'sim-juror-b'],
      ['jury-2', 'sim', 'sim-juror-c'],
    ]);
    expect(c.mode).toBe('consolidation');
    expect(c.consolidator).toMatchObject({ id: 'consolidator', endpoint: 'sim', model: 'sim-consolidator' });
    expect(c.min_jurors).toBe(2);
    expect(c.segmentation).toEqual({ mode: 'auto', max_steps: 2000 });
    expect(c.filter.rules.map((r) => r.name)).toEqual(['no_verdict', 'fatal_defect', 'many_bad_steps', 'degraded_verdict', 'jurors_disagree']);
    // Every seat is priced, so the ledger shows cost for the example as run.
    for (const seat of [...modelJurors(c), c.consolidator!]) expect(Object.keys(c.prices)).toContain(seat.model);
  });

  it('the commented-out real jurors are valid too: swapping them in still loads', () => {
    const text = readFileSync(EXAMPLE, 'utf8');
    const real = text
      .split('\n')
      .map((l) => /^\s*#\s*(- \{ id: jury-\d.*\})\s*$/.exec(l)?.[1])
      .filter((l): l is string => l !== undefined)
      .map((l) => (YAML.parse(l) as unknown[])[0]);
    expect(real).toHaveLength(3);
    const raw = YAML.parse(text) as Record<string, unknown>;
    const c = parseConfig({ ...raw, jurors: real }, 'examples/jury.yaml with the real jurors');
    expect(modelJurors(c).map((j) => j.endpoint)).toEqual(['vllm', 'ollama', 'openrouter']);
    expect(c.jurors[0]).toMatchObject({ model: 'openai/gpt-oss-120b', reasoning_effort: 'high' });
  });
});
