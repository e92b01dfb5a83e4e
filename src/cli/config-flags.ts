/**
 * The commander side of the flags that override a config key: the table, the precedence and
 * how a value is applied live in src/api/config-flags.ts (the library's `runStage` reads the same
 * settings); this module declares them as options and parses what the command line gave.
 */
import { Option } from 'commander';
import { CONFIG_FLAGS, type ConfigFlag, type ConfigFlagName, type ConfigFlagValues } from '../api/config-flags.js';

export * from '../api/config-flags.js';

/** The commander option of a row (a fresh one per command). */
export function configFlagOption(name: ConfigFlagName): Option {
  return new Option(CONFIG_FLAGS[name].option, CONFIG_FLAGS[name].help);
}

/** The flags among `names` as the command line gave them, parsed (keyed by the row's name). */
export function parseConfigFlags(opts: Record<string, unknown>, names: readonly ConfigFlagName[]): ConfigFlagValues {
  const out: Record<string, unknown> = {};
  for (const name of names) {
    const row = CONFIG_FLAGS[name] as ConfigFlag<ConfigFlagName>;
    const raw = opts[configFlagOption(name).attributeName()];
    if (raw === undefined) continue;
    if (!row.parse) {
      if (raw === false) out[name] = false;
    } else out[name] = row.parse(String(raw));
  }
  return out as ConfigFlagValues;
}
