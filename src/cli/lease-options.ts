/** The flags of every command that writes an output: how it takes the output's lease (docs/layout.md). */
import type { Command } from 'commander';
import type { OutputTarget } from '../compose/io.js';
import { claimOutput, DEFAULT_LEASE_EXPIRY_MS, type LeaseSettings } from '../compose/output-claim.js';
import { WHOLE_OUTPUT } from '../pipeline/commit/lease-record.js';
import type { OutputLease } from '../pipeline/commit/output-lease.js';
import { parseDurationFlag, UsageError } from './io.js';

export interface LeaseFlags {
  leaseExpiry?: string;
  waitForLease?: string | true;
  takeOver?: boolean;
}

/** Waiting with no duration given: as long as a lease lasts, twice (its holder may be about to finish). */
const waitDefault = (expiryMs: number) => 2 * expiryMs;

export function addLeaseOptions(cmd: Command): Command {
  return cmd
    .option('--wait-for-lease [duration]', 'when another command is writing --out, wait up to this long for it to finish (default: twice --lease-expiry) instead of stopping with exit code 4')
    .option('--take-over', 'the process named as holding --out is gone (killed, its machine lost): take its lease now instead of waiting for it to expire')
    .option('--lease-expiry <duration>', 'how long this command\'s hold on --out lasts without renewal (renewed every quarter of it); a killed holder blocks others this long', '2m');
}

export function leaseSettings(flags: LeaseFlags): LeaseSettings {
  const expiryMs = flags.leaseExpiry === undefined ? DEFAULT_LEASE_EXPIRY_MS : parseDurationFlag(flags.leaseExpiry, '--lease-expiry');
  const wait = flags.waitForLease;
  const waitMs = wait === undefined ? 0 : wait === true ? waitDefault(expiryMs) : parseDurationFlag(wait, '--wait-for-lease');
  return { expiryMs, waitMs, takeOver: flags.takeOver === true };
}

/**
 * Runs `work` holding --out's lease (decide, repair run/import): taken before anything is
 * written, checked before each manifest, released at the end.
 */
export async function withOutputLease<T>(out: OutputTarget, command: string, flags: LeaseFlags, work: (lease: OutputLease) => Promise<T>): Promise<T> {
  // An OutputFolderError (--out not writable) is a usage error by its kind: exit 2.
  const lease = await claimOutput(out, { command, scope: WHOLE_OUTPUT, settings: leaseSettings(flags) });
  try {
    const result = await work(lease);
    if (lease.lost.aborted) throw lease.lost.reason;
    return result;
  } finally {
    await lease.release().catch(() => undefined);
  }
}
