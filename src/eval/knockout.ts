import PQueue from 'p-queue';
import type { Defect, Impact } from '../../schemas/defect.js';
import type { CallUsage } from '../../schemas/usage.js';
import type { Judgement, Verdict } from '../../schemas/verdict.js';
import { stepLabels } from './gold.js';
import { majoritySystem, phase1Usage, type System, unionSystem } from './ladder.js';
import { flaggedSteps, predictionFromDefects } from './predictions.js';
import type { StepGold } from './types.js';

/** Phase 2 re-run over given Phase 1 judgements (Phase 1 itself is never re-run). */
export interface Phase2Outcome {
  defects: Defect[];
  failed: boolean;
  usage: CallUsage[];
}
export interface Phase2Runner {
  label: string;
  run(verdict: Verdict, judgements: Judgement[]): Promise<Phase2Outcome>;
}

/** A Phase 2 runner applied to every record, on a subset of jurors; a bounded number at once. */
export async function phase2System(name: string, kind: System['kind'], verdicts: readonly Verdict[], jurors: readonly string[], runner: Phase2Runner, concurrency = 16): Promise<System> {
  const keep = new Set(jurors);
  const s: System = { name, kind, predictions: new Map(), usage: new Map() };
  const queue = new PQueue({ concurrency });
  await Promise.all(
    verdicts.map((v) =>
      queue.add(async () => {
        const js = v.phase1_judgements.filter((j) => keep.has(j.juror_id));
        const r = await runner.run(v, js);
        s.predictions.set(v.record_id, predictionFromDefects(v.record_id, v.n_steps, r.defects, r.failed));
        s.usage.set(v.record_id, [...phase1Usage(v, keep), ...r.usage]);
      }),
    ),
  );
  return s;
}

/**
 * Per juror, the gold-erroneous steps it caught (at the threshold) that no other juror of the
 * current jury caught, summed over records (§4.3).
 */
export function uniqueGoldCatches(verdicts: readonly Verdict[], golds: ReadonlyMap<string, StepGold>, jurors: readonly string[], opts: { threshold: Impact; propagate: boolean }): Record<string, number> {
  const out: Record<string, number> = Object.fromEntries(jurors.map((j) => [j, 0]));
  for (const v of verdicts) {
    const g = golds.get(v.record_id);
    if (!g || g.n_steps !== v.n_steps) continue;
    const labels = stepLabels(g, opts.propagate);
    const caught = jurors.map((id) => {
      const j = v.phase1_judgements.find((x) => x.juror_id === id);
      return j?.ok ? flaggedSteps(predictionFromDefects(v.record_id, v.n_steps, j.defects, false), opts.threshold) : new Set<number>();
    });
    caught.forEach((set, k) => {
      for (const s of set) if (labels[s - 1] === 1 && !caught.some((other, m) => m !== k && other.has(s))) out[jurors[k]!]! += 1;
    });
  }
  return out;
}

export interface KnockoutRound {
  size: number;
  jurors: string[];
  /** the juror removed to reach this size (null for the full jury) */
  dropped: string | null;
  /** unique gold catches of this round's jurors, which decide the next removal */
  unique_gold_steps: Record<string, number>;
  systems: System[];
}

/**
 * Knockout (§4.3): drop, one at a time, the juror with the fewest unique gold catches (ties: the
 * later seat), holding Phase 1 fixed; at each size the union, the majority and, given a runner,
 * a re-run of Phase 2 over the survivors' judgements. `full` is the run's own Phase 2 verdict,
 * reported at the full size instead of a re-run.
 */
export async function knockout(
  verdicts: readonly Verdict[],
  golds: ReadonlyMap<string, StepGold>,
  jurors: readonly string[],
  opts: { threshold: Impact; propagate: boolean; downTo?: number; runner?: Phase2Runner; full?: System; concurrency?: number },
): Promise<KnockoutRound[]> {
  const rounds: KnockoutRound[] = [];
  let current = [...jurors];
  let dropped: string | null = null;
  const floor = Math.max(1, opts.downTo ?? 2);
  for (;;) {
    const tag = `${current.length} jurors`;
    const systems = [unionSystem(verdicts, current, `union (${tag})`), majoritySystem(verdicts, current, `majority (${tag})`)];
    if (dropped === null && opts.full) systems.push({ ...opts.full, name: `${opts.full.name} (${tag})`, kind: 'knockout' });
    else if (opts.runner) systems.push(await phase2System(`${opts.runner.label} (${tag})`, 'knockout', verdicts, current, opts.runner, opts.concurrency));
    const unique = uniqueGoldCatches(verdicts, golds, current, opts);
    rounds.push({ size: current.length, jurors: [...current], dropped, unique_gold_steps: unique, systems });
    if (current.length <= floor) break;
    // Fewest unique catches leaves; among equals the later seat goes first.
    let out = current[current.length - 1]!;
    for (let i = current.length - 1; i >= 0; i--) if (unique[current[i]!]! < unique[out]!) out = current[i]!;
    current = current.filter((j) => j !== out);
    dropped = out;
  }
  return rounds;
}
