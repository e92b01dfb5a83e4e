/**
 * What every judging command shares on its command line: the options, declared once here (and
 * in the config-flag table for those that override a config key). Light modules only, so
 * registering a command loads nothing of the jury (src/cli/jury-setup.ts opens it when a
 * command runs).
 */
import { Option } from 'commander';
import { CONFIG_FLAGS, configFlagOption } from './config-flags.js';

import type { JuryOptions } from '../api/open-jury.js';

export type { JuryOptions };

/** Help texts of the options every judging command shares (a command may extend one). */
export const JURY_OPTION_HELP = {
  config: 'jury config (YAML or JSON); without it, 3 simulated jurors + consolidation run in-process',
  gold: 'JSONL of labelled records that simulated endpoints grade against (labels in local input files are used too)',
  auditLog: CONFIG_FLAGS.auditLog.help,
  cache: CONFIG_FLAGS.cache.help,
};

/** A shared option as a fresh commander Option; `help` replaces the shared text where a command says more. */
export function juryOption(name: keyof JuryOptions, help?: string): Option {
  if (name === 'auditLog' || name === 'cache') return configFlagOption(name);
  const flags = name === 'config' ? '-c, --config <file>' : '--gold <file>';
  return new Option(flags, help ?? JURY_OPTION_HELP[name]);
}
