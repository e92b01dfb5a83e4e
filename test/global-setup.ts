import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// What tsconfig.json compiles, plus the files that change how it compiles.
const SOURCE_ROOTS = ['src', 'schemas', 'connectors', 'bench'];
const BUILD_INPUTS = ['tsconfig.json', 'tsconfig.api.json', 'package-lock.json', 'scripts/bundle.mjs', 'scripts/api-types.mjs'];
// Written after a build that succeeded: a failed build never counts as up to date.
const STAMP = join('dist', '.test-build-stamp');

function newestMtime(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return newest;
}

function upToDate(): boolean {
  try {
    const built = statSync(STAMP).mtimeMs;
    const sources = Math.max(...SOURCE_ROOTS.map(newestMtime), ...BUILD_INPUTS.map((f) => statSync(f).mtimeMs));
    return sources < built;
  } catch {
    return false; // no stamp yet, or a root is missing: build
  }
}

/**
 * The run's own temporary folder, and the bin: CLI tests spawn the built bin (tsc, then
 * scripts/bundle.mjs), built once per run unless the caller already did (RJ_SKIP_BUILD=1, as
 * scripts/test.sh does) or nothing changed since the last build here.
 */
export default function setup(): () => void {
  const removeTemp = ownTempDir();
  if (process.env.RJ_SKIP_BUILD !== '1' && !upToDate()) build();
  return removeTemp;
}

/**
 * One temporary folder for the whole run: every test's mkdtemp (and every CLI, Python or
 * browser child, which inherit TMPDIR) lands in it, and it goes when the run ends, so runs do
 * not pile up shard outputs and caches under /tmp. RJ_KEEP_TMP=1 keeps it for a post-mortem.
 */
function ownTempDir(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'rj-test-run-'));
  process.env.TMPDIR = dir; // read by os.tmpdir() at each call, and passed to the test workers
  return () => {
    if (process.env.RJ_KEEP_TMP === '1') process.stderr.write(`test temporary files kept in ${dir}\n`);
    else rmSync(dir, { recursive: true, force: true });
  };
}

function build(): void {
  const started = new Date();
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json'], { stdio: 'inherit' });
  execFileSync(process.execPath, ['scripts/bundle.mjs'], { stdio: 'inherit' });
  execFileSync(process.execPath, ['scripts/api-types.mjs'], { stdio: 'inherit' });
  // Dated when the build started: a source saved while tsc ran still counts as newer.
  writeFileSync(STAMP, `${started.toISOString()}\n`);
  utimesSync(STAMP, started, started);
}
