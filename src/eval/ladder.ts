import type { Defect } from '../../schemas/defect.js';
import type { CallUsage } from '../../schemas/usage.js';
import type { Judgement, Verdict } from '../../schemas/verdict.js';
import { majorityDefects, unionDefects } from '../jury/aggregate.js';
import { passRungs } from './passes.js';
import { predictionFromDefects, predictionFromVerdict } from './predictions.js';
import type { StepPrediction } from './types.js';

/**
 * One rung of the aggregation ladder (§4.7, App. H): a way of turning the same Phase 1
 * judgements into step predictions, with the model calls it took per record.
 */
export interface System {
  name: string;
  kind: 'solo' | 'union' | 'majority' | 'pass' | 'final' | 'knockout' | 'moderator';
  predictions: Map<string, StepPrediction>;
  usage: Map<string, CallUsage[]>;
}

/** Juror ids in seat order, as the verdicts recorded them. */
export function jurorIds(verdicts: readonly Verdict[]): string[] {
  const ids: string[] = [];
  for (const v of verdicts) for (const j of v.phase1_judgements) if (!ids.includes(j.juror_id)) ids.push(j.juror_id);
  return ids;
}

export function phase1Usage(v: Verdict, jurors: ReadonlySet<string>): CallUsage[] {
  return v.usage.filter((u) => u.phase === 'phase1' && jurors.has(u.participant));
}

/** A system built from a per-verdict rule over (a subset of) its Phase 1 judgements. */
export function systemFrom(
  name: string,
  kind: System['kind'],
  verdicts: readonly Verdict[],
  rule: (judgements: Judgement[], v: Verdict) => { defects: Defect[]; failed: boolean; usage: CallUsage[] },
  jurors?: readonly string[],
): System {
  const keep = jurors ? new Set(jurors) : null;
  const s: System = { name, kind, predictions: new Map(), usage: new Map() };
  for (const v of verdicts) {
    const js = keep ? v.phase1_judgements.filter((j) => keep.has(j.juror_id)) : v.phase1_judgements;
    const r = rule(js, v);
    s.predictions.set(v.record_id, predictionFromDefects(v.record_id, v.n_steps, r.defects, r.failed));
    s.usage.set(v.record_id, r.usage);
  }
  return s;
}

const noneOk = (js: readonly Judgement[]) => !js.some((j) => j.ok);

export function unionSystem(verdicts: readonly Verdict[], jurors: readonly string[], name = 'union'): System {
  const set = new Set(jurors);
  return systemFrom(name, 'union', verdicts, (js, v) => ({ defects: unionDefects(js), failed: noneOk(js), usage: phase1Usage(v, set) }), jurors);
}

/** Strict majority of the jurors that succeeded (App. H). */
export function majoritySystem(verdicts: readonly Verdict[], jurors: readonly string[], name = 'majority'): System {
  const set = new Set(jurors);
  return systemFrom(name, 'majority', verdicts, (js, v) => ({ defects: majorityDefects(js).defects, failed: noneOk(js), usage: phase1Usage(v, set) }), jurors);
}

/**
 * The ladder over one run: each juror alone (its Phase 1 judgement), the union and the majority
 * of all jurors, and the run's own Phase 2 verdict (consolidation or deliberation). Verdicts that
 * ran the verification passes add their consensus before the passes and each pass alone (./passes.ts).
 */
export function ladderSystems(verdicts: readonly Verdict[]): System[] {
  const ids = jurorIds(verdicts);
  const solos = ids.map((id) =>
    systemFrom(`solo ${id}`, 'solo', verdicts, (js, v) => {
      const j = js.find((x) => x.juror_id === id);
      return { defects: j?.ok ? j.defects : [], failed: !j?.ok, usage: phase1Usage(v, new Set([id])) };
    }),
  );
  const modes = [...new Set(verdicts.map((v) => v.mode))];
  const final: System = { name: `jury (${modes.join('/')})`, kind: 'final', predictions: new Map(), usage: new Map() };
  for (const v of verdicts) {
    final.predictions.set(v.record_id, predictionFromVerdict(v));
    final.usage.set(v.record_id, v.usage);
  }
  const aggregates = ids.length > 1 ? [unionSystem(verdicts, ids), majoritySystem(verdicts, ids)] : [];
  const passes = passRungs(verdicts).map((p): System => ({ ...p, kind: 'pass' }));
  return [...solos, ...aggregates, ...passes, final];
}
