import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'rj-local-cli-'));
const emptyCache = join(dir, 'empty-cache');
const env = { RJ_MODEL_CACHE: emptyCache };

describe('models and serve-local commands', () => {
  it('are listed in the help', async () => {
    const r = await runCli(['--help']);
    expect(r.stdout).toContain('models');
    expect(r.stdout).toContain('serve-local');
  });

  it('models list shows what is fetched', async () => {
    const r = await runCli(['models', 'list'], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`cache: ${emptyCache}`);
    expect(r.stdout).toMatch(/smollm2-135m\t\(not fetched\)\tApache-2\.0/);
  });

  it('models fetch copies a GGUF file and prints only its cached path on stdout', async () => {
    const src = join(dir, 'tiny.gguf');
    writeFileSync(src, Buffer.concat([Buffer.from('GGUF'), Buffer.alloc(100)]));
    const r = await runCli(['models', 'fetch', src, '--cache-dir', join(dir, 'c')]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${join(dir, 'c', 'user', 'tiny.gguf')}\n`);
    expect(r.stderr).toMatch(/fetched 104 bytes .* sha256 [0-9a-f]{64}/);
    expect(readFileSync(r.stdout.trim()).subarray(0, 4).toString()).toBe('GGUF');
  });

  it('models fetch of something that is not a model exits 2 with the reason', async () => {
    const r = await runCli(['models', 'fetch', 'no-such-model-name'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('not a known model name, URL or file');
    expect(r.stderr).not.toContain('    at '); // no stack trace
  });

  it('serve-local without a fetched model exits 2 and says how to fetch it', async () => {
    const r = await runCli(['serve-local', '--model', 'smollm2-135m', '--port', '0'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('reasoning-jury models fetch smollm2-135m');
  });

  it('serve-local checks its numeric options', async () => {
    const r = await runCli(['serve-local', '--model', 'x.gguf', '--port', 'eighty'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--port must be an integer');
  });

  it('a jury with a local juror whose model is missing fails before judging, with the hint', async () => {
    const config = join(dir, 'jury.yaml');
    writeFileSync(
      config,
      ['endpoints:', '  laptop: { kind: local, model_path: smollm2-135m }', 'jurors:', '  - { id: j, endpoint: laptop, model: smollm2 }', 'mode: single', ''].join('\n'),
    );
    const r = await runCli(['judge', '--config', config], { env, stdin: JSON.stringify({ id: 'r', problem: '1+1?', trace: '1+1=3.' }) });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('run: reasoning-jury models fetch smollm2-135m');
  });
});
