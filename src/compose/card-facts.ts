/**
 * The parts of the dataset card (src/pipeline/commit/dataset-card.ts) that come from the config
 * rather than the manifests: the jury's seats and models, the hashes a verdict carries, the
 * decision policy, and which Parquet tables a command writes before any of them has a part.
 */
import { createHash } from 'node:crypto';
import { isExternalSeat, type FilterPolicy, type FilterRule, type JuryConfig, type ParticipantConfig } from '../../schemas/config.js';
import { SHARD_TABLE_NAMES, type ShardFormat, type ShardTableName } from '../../schemas/outputs.js';
import type { CardJury, CardPolicy, CardSeat, CardTable } from '../pipeline/commit/dataset-card.js';

const seat = (role: string, s: ParticipantConfig | undefined): CardSeat[] => (s ? [{ role, id: s.id, model: s.model }] : []);

/** Every seat that can shape a verdict, in the order a record meets them. */
export function juryFacts(config: JuryConfig, hashes: { promptHash: string; configHash: string }): CardJury {
  // Mode `single` calls the first juror only; the other seats are listed, so the config reads whole.
  const jurors = config.jurors.map((j, i): CardSeat => ({
    role: config.mode === 'single' && i > 0 ? 'juror (not called in mode single)' : 'juror',
    id: j.id,
    model: isExternalSeat(j) ? `external: ${j.format}` : j.model,
  }));
  return {
    mode: config.mode,
    seats: [
      ...jurors,
      ...seat('consolidator', config.mode === 'consolidation' ? config.consolidator : undefined),
      ...seat('moderator', config.mode === 'deliberation' ? config.moderator : undefined),
      ...seat('taxonomy assigner', config.taxonomy?.enabled === false ? undefined : config.taxonomy?.assigner),
      ...seat('removal pass', config.removal_pass?.enabled ? config.removal_pass.seat : undefined),
      ...seat('arbiter', config.arbiter?.enabled ? config.arbiter.seat : undefined),
      ...seat('repair generator', config.repair?.enabled ? config.repair.generator : undefined),
    ],
    ...hashes,
  };
}

/** A rule as one line: its name, its decision and its condition in the config's own words (JSON). */
function ruleLine(rule: FilterRule, i: number): string {
  const { name, decision, ...condition } = rule;
  const defined = Object.fromEntries(Object.entries(condition).filter(([, v]) => v !== undefined));
  return `\`${name ?? `rule ${i + 1}`}\`: ${decision} when \`${JSON.stringify(defined)}\``;
}

/**
 * Identifies a policy: on the card, and in `decide`'s manifests, so a resume with another policy
 * is refused (here rather than in ./redecide.ts, so `run` does not load the shard readers for it).
 */
export function policyHash(policy: FilterPolicy): string {
  return createHash('sha256').update(JSON.stringify(policy)).digest('hex').slice(0, 16);
}

export function policyFacts(policy: FilterPolicy): CardPolicy {
  return { rules: policy.rules.map(ruleLine), default: policy.default, hash: policyHash(policy) };
}

/**
 * The Parquet tables a command writes (and so offers on the card from the start): none without
 * Parquet among its formats; never `reviews` (an output of its own); `off` as the committer's.
 */
export function parquetTables(formats: readonly ShardFormat[], off: readonly ShardTableName[]): CardTable['name'][] {
  if (!formats.includes('parquet')) return [];
  return SHARD_TABLE_NAMES.filter((t): t is CardTable['name'] => t !== 'reviews' && !off.includes(t));
}
