import { createHash } from 'node:crypto';
import { isExternalSeat, type JurorConfig, type JuryConfig, type ParticipantConfig } from '../../schemas/config.js';

// Keyed by the configured seat object; config objects are not changed once parsed.
const seededSeats = new WeakMap<ParticipantConfig, ParticipantConfig>();

/**
 * A seat's sampling seed: the configured one, else a stable hash of its id, so several jurors
 * on one model still draw independent samples (the paper's homogeneous jury, §4.5) and a
 * re-run draws the same ones.
 */
export function seatWithSeed(seat: ParticipantConfig): ParticipantConfig {
  if (seat.seed !== undefined) return seat;
  // The seed depends on the seat alone, and every record asks again for the same seat objects.
  let seeded = seededSeats.get(seat);
  if (!seeded) {
    const seed = createHash('sha256').update(seat.id).digest().readUInt32BE(0) & 0x7fffffff;
    seeded = { ...seat, seed };
    seededSeats.set(seat, seeded);
  }
  return seeded;
}

/** Seats Phase 1 consults, in seat order: one for `single`, all otherwise; model seats seeded, external ones as configured. */
export function activeSeats(config: JuryConfig): JurorConfig[] {
  const jurors = config.mode === 'single' ? config.jurors.slice(0, 1) : config.jurors;
  return jurors.map((j) => (isExternalSeat(j) ? j : seatWithSeed(j)));
}

/** Model jurors Phase 1 actually calls (external seats make no call: src/jury/external/). */
export function activeJurors(config: JuryConfig): ParticipantConfig[] {
  return activeSeats(config).filter((j): j is ParticipantConfig => !isExternalSeat(j));
}

/** The jurors that are model seats, in seat order. */
export function modelJurors(config: Pick<JuryConfig, 'jurors'>): ParticipantConfig[] {
  return config.jurors.filter((j): j is ParticipantConfig => !isExternalSeat(j));
}

/** Default minimum: a majority of the seated jurors (1 for a single judge). */
export function minJurors(config: JuryConfig, seated: number): number {
  return Math.min(seated, config.min_jurors ?? Math.ceil(seated / 2));
}
