import type { CascadeConfig, JurorConfig } from '../../schemas/config.js';
import type { CascadeTrace, Judgement } from '../../schemas/verdict.js';
import type { CallUsage } from '../../schemas/usage.js';
import { firedRules } from './cascade-rules.js';

/** What seating some seats gave: their judgements (abstaining external seats have none) and calls. */
export interface Sitting {
  judgements: Judgement[];
  usage: CallUsage[];
}

/**
 * A cascade Phase 1 (config `phase1.strategy: cascade`): the first `start` seats judge; while a
 * configured rule fires on what was gathered and seats remain, the next seat (`add: one`) or all
 * remaining seats (`add: all`) judge too. Seats keep their configured order. `sit` seats a group
 * (model seats called in parallel, external ones read); the trace says which seats judged and why
 * each escalation happened.
 */
export async function runCascade(
  seats: readonly JurorConfig[],
  cfg: CascadeConfig,
  sit: (group: readonly JurorConfig[]) => Promise<Sitting>,
): Promise<Sitting & { cascade: CascadeTrace }> {
  let next = Math.min(cfg.start, seats.length);
  const first = await sit(seats.slice(0, next));
  const judgements = [...first.judgements];
  const usage = [...first.usage];
  const escalations: string[] = [];
  while (next < seats.length) {
    const fired = firedRules(judgements, cfg);
    if (fired.length === 0) break;
    const group = cfg.add === 'one' ? seats.slice(next, next + 1) : seats.slice(next);
    escalations.push(`after ${next} seats: ${fired.join(', ')} -> ${group.map((s) => s.id).join(', ')}`);
    const more = await sit(group);
    judgements.push(...more.judgements);
    usage.push(...more.usage);
    next += group.length;
  }
  return { judgements, usage, cascade: { seats: seats.slice(0, next).map((s) => s.id), escalations } };
}
