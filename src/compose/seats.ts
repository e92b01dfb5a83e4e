/** The seats of a config that will call a model in a run (what preflight checks). */
import { isExternalSeat, type JuryConfig, type ParticipantConfig } from '../../schemas/config.js';

export function callingSeats(config: JuryConfig): ParticipantConfig[] {
  const seats: Array<ParticipantConfig | undefined> = [
    // Mode `single` calls the first juror only.
    ...(config.mode === 'single' ? config.jurors.slice(0, 1) : config.jurors).filter((j): j is ParticipantConfig & { kind?: 'model' } => !isExternalSeat(j)),
    config.mode === 'consolidation' ? config.consolidator : undefined,
    config.mode === 'deliberation' ? config.moderator : undefined,
    config.taxonomy?.assigner,
    config.removal_pass?.enabled ? config.removal_pass.seat : undefined,
    config.arbiter?.enabled ? config.arbiter.seat : undefined,
    config.repair?.enabled ? config.repair.generator : undefined,
  ];
  return seats.filter((s): s is ParticipantConfig => s !== undefined);
}
