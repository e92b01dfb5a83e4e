/**
 * Every repository path the README, CONTRIBUTING.md and docs/*.md name must exist, so a renamed or
 * deleted file cannot leave a doc pointing at nothing.
 *
 * What counts as a path (the rule, in one place):
 * - a Markdown link target `[text](target)`: resolved against the page's own folder, as a reader's
 *   browser would; URLs (`scheme://`, `mailto:`) are not paths. A `#anchor` on a link to a
 *   Markdown page (or alone, for the page itself) must be one of that page's headings, slugged
 *   as GitHub does;
 * - a token in an inline code span or in a fenced block that starts with one of the repository's
 *   top folders (`src/`, `test/`, `docs/`, … see TOP_FOLDERS) or is one of its top files: resolved
 *   against the repository root;
 * - a token ending in an extension of this repository's own code (.ts, .mts, .mjs, .cjs, .sh)
 *   without such a folder (`stage.ts`, `steps/segment.ts`): some file in the repository must end
 *   with it. (Bare `.py` names are other projects' scorers, cited with their repository.)
 * A token with a placeholder (`<first>`, `{a,b}`, `…`, `$VAR`, `N`) is an example, not a path;
 * `*` is a glob that must match at least one file. Output folders (`out/verdicts/…`, `OUT/…`),
 * `dist/` (built) and user files such as `jury.yaml` match none of the rules.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const TOP_FOLDERS = [
  'src', 'connectors', 'schemas', 'test', 'bench', 'scripts', 'docs', 'infra', 'examples',
  'prompts', 'taxonomy', '.ci',
];
const TOP_FILES = [
  'README.md', 'CONTRIBUTING.md', 'package.json', 'package-lock.json', 'Dockerfile', '.dockerignore',
  'biome.json', 'tsconfig.json', 'tsconfig.test.json', 'vitest.config.ts', '.dependency-cruiser.cjs',
];
const SOURCE_EXT = /\.(ts|mts|mjs|cjs|sh)$/;
const PLACEHOLDER = /[<>{}…$]|\bN\b|\.\.\./;

export type Mention = { path: string; via: 'link' | 'code' };

/** The path-like tokens of one Markdown text, before deciding which are paths. */
export function mentions(markdown: string): Mention[] {
  const out: Mention[] = [];
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      continue;
    }
    if (fenced) {
      for (const token of line.split(/[\s,;()'"=|\[\]]+/)) out.push({ path: token, via: 'code' });
      continue;
    }
    for (const m of line.matchAll(/\]\(([^)\s]+)\)/g)) out.push({ path: m[1] as string, via: 'link' });
    for (const m of line.matchAll(/`([^`]+)`/g)) {
      for (const token of (m[1] as string).split(/[\s,;()'"=|]+/)) out.push({ path: token, via: 'code' });
    }
  }
  return out;
}

type Repo = { exists(path: string): boolean; files: string[]; read?(path: string): string };

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const m = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = (m[1] as string).toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

function linkProblem(page: string, raw: string, repo: Repo): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(raw) || raw === '') return null;
  const [path = '', anchor] = raw.split('#');
  const target = path === '' ? page : posix.normalize(posix.join(posix.dirname(page), path));
  if (!repo.exists(target)) return `${page}: link to ${raw} (${target}) names no file`;
  if (anchor === undefined || !target.endsWith('.md') || !repo.read) return null;
  return anchors(repo.read(target)).has(anchor) ? null : `${page}: link to ${raw}: ${target} has no heading #${anchor}`;
}

/** Why a mention in the page `page` (repository-relative) names nothing, or null when fine. */
export function problem(page: string, mention: Mention, repo: Repo): string | null {
  if (mention.via === 'link') return linkProblem(page, mention.path, repo);
  let path = mention.path.replace(/[.:,;]+$/, '').replace(/^\.\//, '');
  path = path.replace(/:\d+$/, '');
  if (path === '' || path.includes('://') || PLACEHOLDER.test(path)) return null;
  const top = path.split('/')[0] as string;
  const rooted = (path.includes('/') && TOP_FOLDERS.includes(top)) || TOP_FILES.includes(path);
  if (rooted) {
    if (path.includes('*')) {
      const glob = new RegExp(`^${path.replace(/[.+?^()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}`);
      return repo.files.some((f) => glob.test(f)) ? null : `${page}: ${path} matches no file`;
    }
    return repo.exists(path.replace(/\/$/, '')) ? null : `${page}: ${path} does not exist`;
  }
  if (SOURCE_EXT.test(path) && !path.includes('*') && !path.startsWith('dist/')) {
    const tail = `/${path}`;
    return repo.files.some((f) => `/${f}`.endsWith(tail)) ? null : `${page}: no file ends with ${path}`;
  }
  return null;
}

function walk(dir: string, into: string[]): string[] {
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (['node_modules', 'dist', '.git', '.cache'].includes(entry.name)) continue;
      walk(path, into);
    } else into.push(path);
  }
  return into;
}

function pages(): string[] {
  const docs = readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md'));
  return ['README.md', 'CONTRIBUTING.md', ...docs.map((f) => `docs/${f}`)].filter((p) =>
    existsSync(join(ROOT, p)),
  );
}

describe('paths named in the docs', () => {
  const fake: Repo = {
    files: ['src/pipeline/stage.ts', 'src/pipeline/steps/segment.ts', 'docs/layout.md', 'README.md'],
    exists(path) {
      return this.files.some((f) => f === path || f.startsWith(`${path}/`));
    },
    read: (path) => (path === 'docs/layout.md' ? '# Layout\n\n## One writer per output\n\n## Exit codes (all)\n' : '# Readme\n\n## Guarantees\n'),
  };
  const check = (page: string, text: string) =>
    mentions(text)
      .map((m) => problem(page, m, fake))
      .filter((p) => p !== null);

  it('flags a wrong path in each form: link, rooted code span, bare source file, fenced block', () => {
    expect(check('README.md', 'see [layout](docs/layuot.md)')).toEqual([
      'README.md: link to docs/layuot.md (docs/layuot.md) names no file',
    ]);
    expect(check('README.md', 'the stage (`src/pipeline/stag.ts`)')).toEqual([
      'README.md: src/pipeline/stag.ts does not exist',
    ]);
    expect(check('docs/layout.md', 'then `range-commit.ts` writes')).toEqual([
      'docs/layout.md: no file ends with range-commit.ts',
    ]);
    expect(check('docs/layout.md', '```\n intake  steps/map.ts  maps\n```')).toEqual([
      'docs/layout.md: no file ends with steps/map.ts',
    ]);
    expect(check('README.md', 'the prompts `src/pipeline/x*.ts`')).toEqual([
      'README.md: src/pipeline/x*.ts matches no file',
    ]);
    expect(check('README.md', 'see [the lease](docs/layout.md#one-writer-per-outputs)')).toEqual([
      'README.md: link to docs/layout.md#one-writer-per-outputs: docs/layout.md has no heading #one-writer-per-outputs',
    ]);
    expect(check('README.md', '[up](#guarantee)')).toEqual(['README.md: link to #guarantee: README.md has no heading #guarantee']);
  });

  it('slugs headings as GitHub does', () => {
    expect([...anchors('# A b\n## Exit codes (all)\n## `run --rejudge`: again\n## A b\n```\n# not a heading\n```')]).toEqual([
      'a-b',
      'exit-codes-all',
      'run---rejudge-again',
      'a-b-1',
    ]);
  });

  it('accepts right paths, page-relative links, anchors, globs, and leaves examples alone', () => {
    const text = [
      '[layout](layout.md#one-writer-per-output) [readme](../README.md#guarantees) [web](https://x.org/a.md)',
      '`src/pipeline/stage.ts` `steps/segment.ts` `stage.ts:12` `src/pipeline/st*.ts` `docs/`',
      '`out/verdicts/source=file/part-<first>-<last>.parquet` `OUT/_lease/` `jury.yaml` `dist/cli/main.js`',
      '`src/pipeline/{a,b}.ts` [codes](#exit-codes-all)',
    ].join('\n');
    expect(check('docs/layout.md', text)).toEqual([]);
  });

  it('every path README.md, CONTRIBUTING.md and docs/*.md name exists', () => {
    const files = walk('', []);
    const set = new Set(files);
    const repo: Repo = {
      files,
      exists: (path) => set.has(path) || existsSync(join(ROOT, path)),
      read: (path) => readFileSync(join(ROOT, path), 'utf8'),
    };
    const problems: string[] = [];
    for (const page of pages()) {
      const text = readFileSync(join(ROOT, page), 'utf8');
      for (const m of mentions(text)) {
        const p = problem(page, m, repo);
        if (p !== null) problems.push(p);
      }
    }
    expect(pages()).toContain('README.md');
    expect([...new Set(problems)], `checked ${pages().length} pages from ${relative(process.cwd(), ROOT) || '.'}`).toEqual([]);
  });
});
