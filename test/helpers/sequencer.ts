import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Longest test files first (test/durations.json, wall seconds of one suite run). A fresh clone
 * has no vitest cache, so vitest would order by file size and start the Kafka outage and crash
 * tests, which mostly wait, in the last minutes, where they ran nearly alone. Started first,
 * their waiting overlaps the CPU-bound files. Files not listed keep vitest's own order after
 * the listed ones; projects keep vitest's order too (they run one after the other).
 */
export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const { seconds } = JSON.parse(readFileSync(new URL('../durations.json', import.meta.url), 'utf8')) as { seconds: Record<string, number> };
    return longestFirst(await super.sort(files), seconds, this.ctx.config.root);
  }
}

interface FileLike {
  project: { name: string };
  moduleId: string;
}

/** `base` reordered: by project as in `base`, then by recorded wall seconds (most first), then as in `base`. */
export function longestFirst<T extends FileLike>(base: readonly T[], seconds: Record<string, number>, root: string): T[] {
  const projectRank = new Map<string, number>();
  for (const f of base) if (!projectRank.has(f.project.name)) projectRank.set(f.project.name, projectRank.size);
  const rank = new Map(base.map((f, i) => [f, i]));
  const wall = (f: T) => seconds[relative(root, f.moduleId)] ?? 0;
  return [...base].sort((a, b) => projectRank.get(a.project.name)! - projectRank.get(b.project.name)! || wall(b) - wall(a) || rank.get(a)! - rank.get(b)!);
}
