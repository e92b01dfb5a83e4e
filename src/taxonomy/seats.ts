import type { JuryConfig, ParticipantConfig, TaxonomyConfig } from '../../schemas/config.js';
import { modelJurors, seatWithSeed } from '../jury/seats.js';

export const DEFAULT_TAXONOMY_SETTINGS: TaxonomyConfig = { enabled: true, batch_size: 8, max_rounds: 3 };

/** The config's taxonomy section, or the defaults (used by `taxonomy induce` without one). */
export function taxonomySettings(config: JuryConfig): TaxonomyConfig {
  return config.taxonomy ?? DEFAULT_TAXONOMY_SETTINGS;
}

/**
 * The seat that assigns leaves. Without one configured, the consolidator's model (else the
 * first model juror's) at temperature 0: labelling is a lookup, and a re-run should label alike.
 */
export function assignerSeat(config: JuryConfig): ParticipantConfig {
  const t = config.taxonomy;
  if (t?.assigner) return seatWithSeed(t.assigner);
  const base = config.consolidator ?? modelJurors(config)[0];
  if (!base) throw new Error('taxonomy needs taxonomy.assigner: every juror is external and there is no consolidator to borrow a model from');
  return seatWithSeed({ ...base, id: 'taxonomist', temperature: 0 });
}

/** The seat for `taxonomy induce`: the configured inducer, else the assigner. */
export function inducerSeat(config: JuryConfig): ParticipantConfig {
  const t = config.taxonomy;
  return t?.inducer ? seatWithSeed(t.inducer) : assignerSeat(config);
}
