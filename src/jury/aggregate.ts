import { type Defect, IMPACT_RANK } from '../../schemas/defect.js';
import type { Judgement } from '../../schemas/verdict.js';

/** Rough specificity: more cited steps and more detail make a description more useful. */
function specificity(d: Defect): number {
  return d.what_went_wrong.length + d.evidence.length + (d.correct_value ? 50 : 0);
}

function stronger(a: Defect, b: Defect): Defect {
  const r = IMPACT_RANK[a.impact] - IMPACT_RANK[b.impact];
  if (r !== 0) return r > 0 ? a : b;
  return specificity(a) >= specificity(b) ? a : b;
}

function byFirstRef(a: Defect, b: Defect): number {
  return (a.statement_refs[0] ?? 0) - (b.statement_refs[0] ?? 0);
}

const succeeded = (js: readonly Judgement[]) => js.filter((j) => j.ok);

/** Union baseline: the bag of every successful juror's defects, each attributed to its juror. */
export function unionDefects(judgements: readonly Judgement[]): Defect[] {
  const out: Defect[] = [];
  for (const j of succeeded(judgements)) for (const d of j.defects) out.push({ ...d, vote_count: 1, voters: [j.juror_id] });
  return out.sort(byFirstRef);
}

/**
 * Majority baseline (App. H): a step is flagged only when strictly more than half of the jurors
 * that succeeded cite it. Each flagged step is described by the strongest defect citing it;
 * steps sharing that description are reported together.
 */
export function majorityDefects(judgements: readonly Judgement[]): { defects: Defect[]; rejected: Defect[] } {
  const ok = succeeded(judgements);
  const need = Math.floor(ok.length / 2) + 1;
  const citing = new Map<number, { voters: Set<string>; best: Defect }>();
  for (const j of ok) {
    for (const d of j.defects) {
      for (const s of d.statement_refs) {
        const e = citing.get(s);
        if (!e) citing.set(s, { voters: new Set([j.juror_id]), best: d });
        else {
          e.voters.add(j.juror_id);
          e.best = stronger(e.best, d);
        }
      }
    }
  }
  const grouped = new Map<Defect, { steps: number[]; voters: Set<string> }>();
  for (const [step, e] of [...citing.entries()].sort((a, b) => a[0] - b[0])) {
    if (e.voters.size < need) continue;
    const g = grouped.get(e.best) ?? { steps: [], voters: new Set<string>() };
    g.steps.push(step);
    e.voters.forEach((v) => g.voters.add(v));
    grouped.set(e.best, g);
  }
  const defects: Defect[] = [...grouped.entries()].map(([d, g]) => ({
    ...d,
    statement_refs: g.steps,
    vote_count: g.voters.size,
    voters: [...g.voters].sort(),
  }));
  const flagged = new Set(defects.flatMap((d) => d.statement_refs));
  const rejected = ok.flatMap((j) => j.defects.filter((d) => !d.statement_refs.some((s) => flagged.has(s))));
  return { defects: defects.sort(byFirstRef), rejected };
}

/**
 * Best-effort aggregation used when Phase 2 fails (App. F): the union with defects that cite the
 * same steps merged into their strongest description, voters collected.
 */
export function mergedUnion(judgements: readonly Judgement[]): Defect[] {
  const byRefs = new Map<string, { best: Defect; voters: Set<string> }>();
  for (const j of succeeded(judgements)) {
    for (const d of j.defects) {
      const key = d.statement_refs.join(',');
      const e = byRefs.get(key);
      if (!e) byRefs.set(key, { best: d, voters: new Set([j.juror_id]) });
      else {
        e.best = stronger(e.best, d);
        e.voters.add(j.juror_id);
      }
    }
  }
  return [...byRefs.values()]
    .map(({ best, voters }) => ({ ...best, vote_count: voters.size, voters: [...voters].sort() }))
    .sort(byFirstRef);
}

/**
 * Degree of agreement in [0,1]: the mean share of succeeded jurors backing each final defect,
 * or, when nothing was found, the share of jurors that also found nothing.
 */
export function agreement(defects: readonly Defect[], judgements: readonly Judgement[]): number {
  const ok = succeeded(judgements);
  if (ok.length === 0) return 0;
  if (defects.length === 0) return ok.filter((j) => j.defects.length === 0).length / ok.length;
  const shares = defects.map((d) => Math.min(1, (d.vote_count ?? d.voters?.length ?? 0) / ok.length));
  return shares.reduce((a, b) => a + b, 0) / shares.length;
}

/** Phase 1 defects none of whose steps reached the final verdict, as readable one-liners. */
export function dissent(final: readonly Defect[], judgements: readonly Judgement[]): string[] {
  const covered = new Set(final.flatMap((d) => d.statement_refs));
  const out: string[] = [];
  for (const j of succeeded(judgements)) {
    for (const d of j.defects) {
      if (d.statement_refs.some((s) => covered.has(s))) continue;
      out.push(`${j.juror_id} (${d.impact}, ${d.statement_refs.map((s) => `STEP-${s}`).join(', ')}): ${d.what_went_wrong}`);
    }
  }
  return out;
}
