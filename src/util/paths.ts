import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

/**
 * The package root (where prompts/ and examples/ live). Found by walking up from this module,
 * so it works both from src/ under vitest and from dist/src/ after a build or npm install.
 */
export function packageRoot(): string {
  if (cached) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && JSON.parse(readFileSync(pkg, 'utf8')).name === 'reasoning-jury') return (cached = dir);
    const up = dirname(dir);
    if (up === dir) throw new Error('cannot locate the reasoning-jury package root');
    dir = up;
  }
}

/** The shipped default taxonomy (paper App. J). */
export function defaultTaxonomyPath(): string {
  return join(packageRoot(), 'taxonomy', 'default.json');
}
