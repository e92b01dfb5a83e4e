/**
 * The flag-over-config table (src/cli/config-flags.ts): a given flag wins, else the config's
 * key, else the built-in default; a `--no-` switch counts only when given; bad values are one
 * line naming the flag.
 */
import { describe, expect, it } from 'vitest';
import { Command } from 'commander';
import { parseConfig } from '../../src/config/load.js';
import { applyConfigFlags, CONFIG_FLAGS, configFlagOption, parseConfigFlags, setting, settingSource, type ConfigFlagName } from '../../src/cli/config-flags.js';

const base = () => parseConfig({ endpoints: { sim: { kind: 'simulator' } }, jurors: [{ id: 'a', endpoint: 'sim', model: 'm' }], consolidator: { id: 'c', endpoint: 'sim', model: 'm' } });
const NAMES = Object.keys(CONFIG_FLAGS) as ConfigFlagName[];

/** What commander hands over for `args` with every table flag declared. */
function commandLine(args: string[]): Record<string, unknown> {
  const cmd = new Command().exitOverride();
  for (const name of NAMES) cmd.addOption(configFlagOption(name));
  return cmd.parse(args, { from: 'user' }).opts();
}

describe('flags that override a config key', () => {
  it('flag, else config, else default', () => {
    const config = { ...base(), budget_tokens: 500, input: { ...base().input, duplicate_ids: 'keep_all' as const } };
    const none = parseConfigFlags(commandLine([]), NAMES);
    expect(none).toEqual({});
    expect(setting(none, config, 'budgetTokens')).toBe(500);
    expect(setting(none, config, 'duplicateIds')).toBe('keep_all');
    expect(setting(none, config, 'onChangedInput')).toBe('error');
    expect(setting(none, config, 'corpus')).toBe('parquet');
    expect(setting(none, config, 'budgetUsd')).toBeUndefined();
    expect(settingSource(none, 'budgetTokens')).toBe('budget_tokens');

    const given = parseConfigFlags(commandLine(['--budget-tokens', '20', '--duplicate-ids', 'keep_first', '--corpus', 'off', '--max-outage', '90s']), NAMES);
    expect(given).toEqual({ budgetTokens: 20, duplicateIds: 'keep_first', corpus: 'off', maxOutageMs: 90_000 });
    expect(setting(given, config, 'budgetTokens')).toBe(20);
    expect(setting(given, config, 'duplicateIds')).toBe('keep_first');
    expect(settingSource(given, 'budgetTokens')).toBe('--budget-tokens');
    expect(applyConfigFlags(config, given).max_outage_ms).toBe(90_000);
  });

  it('a --no- switch counts only when given: absent, the config decides', () => {
    const off = { ...base(), preflight: false, cache: { ...base().cache, enabled: false } };
    const absent = parseConfigFlags(commandLine([]), NAMES);
    expect(setting(absent, off, 'preflight')).toBe(false);
    expect(applyConfigFlags(off, { cache: true, preflight: true }).cache.enabled).toBe(false);
    const given = parseConfigFlags(commandLine(['--no-preflight', '--no-cache']), NAMES);
    expect(given).toEqual({ preflight: false, cache: false });
    expect(setting(given, base(), 'preflight')).toBe(false);
    expect(applyConfigFlags(base(), given).cache.enabled).toBe(false);
  });

  it('writes into the config only the keys the command reads from it; hashed input settings stay as configured', () => {
    const given = parseConfigFlags(commandLine(['--duplicate-ids', 'keep_all', '--on-changed-input', 'rejudge', '--verdict-details', 'on', '--audit-log', 'calls.jsonl']), NAMES);
    const applied = applyConfigFlags(base(), given);
    expect(applied.input).toEqual(base().input);
    expect(applied.verdict_details).toBe('on');
    expect(applied.audit_log.path).toBe('calls.jsonl');
  });

  it('a bad value is one line naming the flag', () => {
    const parse = (args: string[]) => () => parseConfigFlags(commandLine(args), NAMES);
    expect(parse(['--duplicate-ids', 'twice'])).toThrow('--duplicate-ids must be dead_letter | keep_first | keep_all (got "twice")');
    expect(parse(['--verdict-details', 'yes'])).toThrow('--verdict-details must be auto, on or off (got "yes")');
    expect(parse(['--corpus', 'csv'])).toThrow('--corpus must be parquet, jsonl or off (got "csv")');
    expect(parse(['--budget-usd', '-1'])).toThrow('--budget-usd must be a positive number of US dollars (got "-1")');
    expect(parse(['--budget-tokens', '1.5'])).toThrow('--budget-tokens must be a positive integer (got "1.5")');
  });
});
