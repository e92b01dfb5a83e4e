import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configHash, defaultConfig, loadConfigFile } from '../src/config/load.js';
import { packageRoot } from '../src/util/paths.js';

describe('config_hash', () => {
  // Pinned: config_hash is written into every verdict row, so a schema edit (descriptions, a
  // refactor of the hashing) must not move it for an existing config.
  it('is unchanged for the embedded default and for examples/jury.yaml', () => {
    expect(configHash(defaultConfig())).toBe('d78282f084a851ce');
    expect(configHash(loadConfigFile(join(packageRoot(), 'examples', 'jury.yaml')))).toBe('d24b238388ba6195');
  });
});
