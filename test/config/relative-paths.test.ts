import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { configHash, loadConfigFile } from '../../src/config/load.js';
import { packageRoot } from '../../src/util/paths.js';

describe('paths in a config file', () => {
  it('resolve against its folder, while config_hash sees them as written (same hash wherever the folder lives)', () => {
    const load = () => {
      const dir = mkdtempSync(join(tmpdir(), 'rj-cfgpaths-'));
      mkdirSync(join(dir, 'p'));
      copyFileSync(join(packageRoot(), 'taxonomy', 'default.json'), join(dir, 'tax.json'));
      writeFileSync(
        join(dir, 'jury.yaml'),
        YAML.stringify({
          endpoints: { sim: { kind: 'simulator' }, loc: { kind: 'local', model_path: 'models/m.gguf' }, named: { kind: 'local', model_path: 'smollm2-135m' } },
          jurors: [{ id: 'j0', endpoint: 'sim', model: 'm' }],
          mode: 'single',
          taxonomy: { file: 'tax.json' },
          prompts_dir: 'p',
          cache: { dir: 'c' },
          audit_log: { path: 'logs/a.jsonl' },
        }),
      );
      return { dir, c: loadConfigFile(join(dir, 'jury.yaml')) };
    };
    const a = load();
    const b = load();
    expect(a.c.taxonomy!.file).toBe(join(a.dir, 'tax.json'));
    expect(a.c.prompts_dir).toBe(join(a.dir, 'p'));
    expect(a.c.cache.dir).toBe(join(a.dir, 'c'));
    expect(a.c.audit_log.path).toBe(join(a.dir, 'logs', 'a.jsonl'));
    expect(a.c.endpoints.loc!.model_path).toBe(join(a.dir, 'models', 'm.gguf'));
    expect(a.c.endpoints.named!.model_path).toBe('smollm2-135m'); // a catalog name, not a path
    expect(b.c.taxonomy!.file).not.toBe(a.c.taxonomy!.file);
    expect(configHash(b.c)).toBe(configHash(a.c));
    // ...and a different written path is a different hash.
    const moved = { ...a.c, taxonomy: { ...a.c.taxonomy!, file: join(a.dir, 'tax.json') } };
    expect(configHash({ ...moved, prompts_dir: 'other' } as typeof a.c)).not.toBe(configHash(a.c));
  });

  it('a default cache dir stays under the working directory', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rj-cfgpaths-'));
    writeFileSync(join(dir, 'jury.yaml'), YAML.stringify({ endpoints: { sim: { kind: 'simulator' } }, jurors: [{ id: 'j0', endpoint: 'sim', model: 'm' }], mode: 'single' }));
    expect(loadConfigFile(join(dir, 'jury.yaml')).cache.dir).toBe('.cache/responses');
  });
});
