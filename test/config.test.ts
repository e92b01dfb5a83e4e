import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, configHash, defaultConfig, defaultConfigInput, loadConfigFile, parseConfig } from '../src/config/load.js';
import { modelJurors } from '../src/jury/seats.js';

const dir = mkdtempSync(join(tmpdir(), 'rj-config-'));
const write = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};

describe('config', () => {
  it('the embedded default is valid: 3 simulated jurors + consolidation', () => {
    const c = defaultConfig();
    expect(c.jurors).toHaveLength(3);
    expect(c.mode).toBe('consolidation');
    expect(c.endpoints.sim!.kind).toBe('simulator');
    expect(c.severity_threshold).toBe('minor');
  });

  it('reads YAML and JSON', () => {
    const yaml = write(
      'jury.yaml',
      `endpoints:\n  vllm:\n    base_url: http://127.0.0.1:8000/v1\n    api_key_env: VLLM_KEY\njurors:\n  - { id: j0, endpoint: vllm, model: m }\nmode: single\n`,
    );
    expect(modelJurors(loadConfigFile(yaml))[0]!.temperature).toBe(1);
    const json = write('jury.json', JSON.stringify(defaultConfigInput()));
    expect(loadConfigFile(json).mode).toBe('consolidation');
  });

  it('reports every problem with its path', () => {
    const bad = write(
      'bad.yaml',
      `endpoints:\n  a:\n    kind: openai\n    max_concurrency: -1\njurors:\n  - { id: j0, endpoint: a, model: m }\n  - { id: j0, endpoint: nope, model: m, temprature: 1 }\nmode: consolidation\nmin_jurors: 5\n`,
    );
    let msg = '';
    try {
      loadConfigFile(bad);
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      msg = (e as Error).message;
    }
    expect(msg).toContain(bad);
    expect(msg).toMatch(/endpoints\.a\.base_url: required for kind "openai"/);
    expect(msg).toMatch(/endpoints\.a\.max_concurrency:/);
    expect(msg).toMatch(/jurors\.1: Unrecognized key: "temprature"/);
    // refinements run only once the shapes parse; fix the shapes and check them
    const bad2 = { ...defaultConfigInput(), jurors: [{ id: 'j0', endpoint: 'sim', model: 'm' }, { id: 'j0', endpoint: 'nope', model: 'm' }], consolidator: undefined, min_jurors: 5 };
    try {
      parseConfig(bad2, 'inline');
    } catch (e) {
      msg = (e as Error).message;
    }
    expect(msg).toMatch(/jurors\.1\.endpoint: unknown endpoint "nope"/);
    expect(msg).toMatch(/jurors\.1\.id: duplicate juror id "j0"/);
    expect(msg).toMatch(/consolidator: mode "consolidation" needs a consolidator/);
    expect(msg).toMatch(/min_jurors: is 5 but only 2 jurors/);
  });

  it('clear errors for unreadable and unparsable files', () => {
    expect(() => loadConfigFile(join(dir, 'missing.yaml'))).toThrow(/cannot read config .*ENOENT/);
    expect(() => loadConfigFile(write('broken.yaml', 'a: [1,'))).toThrow(/cannot parse/);
  });

  it('config hash follows what shapes verdicts, not where files or endpoints live', () => {
    const a = defaultConfig();
    const b = parseConfig({ ...defaultConfigInput(), cache: { enabled: true, dir: '/elsewhere' }, audit_log: { path: '/tmp/a.jsonl' } });
    const c = parseConfig({ ...defaultConfigInput(), mode: 'union' });
    expect(configHash(a)).toBe(configHash(b));
    expect(configHash(a)).not.toBe(configHash(c));
  });
});
