import type { Defect, Impact } from '../../../schemas/defect.js';
import type { Judgement } from '../../../schemas/verdict.js';
import type { PanelEntry } from '../../prompts/build.js';

/**
 * Adaptive Phase 2 triage: how far apart are the Phase 1 judgements? Findings of all jurors are
 * grouped by shared steps (two findings citing a common step are about the same spot). A group
 * is settled when every successful juror reported it with exactly the same steps and, step by
 * step, the same severity; anything else is contested.
 */

export type TriagePath = 'empty' | 'unanimous' | 'contested';

export interface Triage {
  path: TriagePath;
  /** one defect per settled group, backed by every successful juror */
  settled: Defect[];
  /** per successful juror, its findings in contested groups (configured order) */
  contested: PanelEntry[];
  contestedGroups: number;
}

interface Found {
  juror: string;
  defect: Defect;
}

function groups(found: readonly Found[]): Found[][] {
  const parent = found.map((_, i) => i);
  const root = (i: number): number => (parent[i] === i ? i : (parent[i] = root(parent[i]!)));
  const owner = new Map<number, number>();
  found.forEach((f, i) => {
    for (const s of f.defect.statement_refs) {
      const o = owner.get(s);
      if (o === undefined) owner.set(s, i);
      else parent[root(i)] = root(o);
    }
  });
  const out = new Map<number, Found[]>();
  found.forEach((f, i) => out.set(root(i), [...(out.get(root(i)) ?? []), f]));
  return [...out.values()];
}

/** step -> highest severity this juror gives it inside the group, as a comparable string. */
function signature(fs: readonly Found[], withSeverity: boolean): string {
  const rank: Record<Impact, number> = { neutral: 0, minor: 1, major: 2, fatal: 3 };
  const at = new Map<number, Impact>();
  for (const f of fs) for (const s of f.defect.statement_refs) {
    const cur = at.get(s);
    if (cur === undefined || rank[f.defect.impact] > rank[cur]) at.set(s, f.defect.impact);
  }
  return [...at.entries()].sort((a, b) => a[0] - b[0]).map(([s, i]) => (withSeverity ? `${s}:${i}` : `${s}`)).join(',');
}

const detail = (d: Defect) => d.what_went_wrong.length + d.evidence.length + (d.correct_value ? 50 : 0);

export function triage(judgements: readonly Judgement[], sameSeverity = true): Triage {
  const ok = judgements.filter((j) => j.ok);
  const ids = ok.map((j) => j.juror_id);
  const found: Found[] = ok.flatMap((j) => j.defects.map((defect) => ({ juror: j.juror_id, defect })));
  if (found.length === 0) return { path: 'empty', settled: [], contested: ok.map((j) => ({ juror_id: j.juror_id, defects: [] })), contestedGroups: 0 };
  const settled: Defect[] = [];
  const open = new Set<Defect>();
  let contestedGroups = 0;
  for (const g of groups(found)) {
    const sigs = ids.map((id) => signature(g.filter((f) => f.juror === id), sameSeverity));
    const same = sigs.every((s) => s !== '' && s === sigs[0]);
    if (!same) {
      contestedGroups++;
      for (const f of g) open.add(f.defect);
      continue;
    }
    // The most detailed wording stands for the group (the most severe rating when severities
    // may differ); its refs are the group's (identical) steps.
    const rank: Record<Impact, number> = { neutral: 0, minor: 1, major: 2, fatal: 3 };
    const better = (a: Found, b: Found) => (sameSeverity ? 0 : rank[b.defect.impact] - rank[a.defect.impact]) || detail(b.defect) - detail(a.defect);
    const best = g.reduce((a, b) => (better(a, b) > 0 ? b : a)).defect;
    const refs = [...new Set(g.flatMap((f) => f.defect.statement_refs))].sort((a, b) => a - b);
    settled.push({ ...best, statement_refs: refs, vote_count: ids.length, voters: [...ids].sort() });
  }
  settled.sort((a, b) => (a.statement_refs[0] ?? 0) - (b.statement_refs[0] ?? 0));
  const contested = ok.map((j) => ({ juror_id: j.juror_id, defects: j.defects.filter((d) => open.has(d)) }));
  return { path: contestedGroups === 0 ? 'unanimous' : 'contested', settled, contested, contestedGroups };
}
