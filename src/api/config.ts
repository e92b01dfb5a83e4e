/** A config file or object, loaded and validated as the CLI loads `--config` (src/config/load.ts). */
import { resolve } from 'node:path';
import type { JuryConfig } from '../../schemas/config.js';
import { ConfigError, loadConfigFile, parseConfig } from '../config/load.js';
import { pathProblems, resolveConfigPaths } from '../config/paths.js';
import type { ConfigSource } from './types.js';

/** The config, every key checked; a file's relative paths are read against its folder, an object's against the working directory. */
export function loadConfig(source: ConfigSource): JuryConfig {
  if (typeof source === 'string') return loadConfigFile(source);
  if (source === null || typeof source !== 'object') throw new ConfigError('invalid config: expected a file path or a config object');
  const config = resolveConfigPaths(parseConfig(source, 'config object'), source, resolve('config object'));
  const problems = pathProblems(config);
  if (problems.length > 0) throw new ConfigError(`invalid config in config object: ${problems.join('; ')}`);
  return config;
}

/** How messages name the config. */
export const configLabel = (source: ConfigSource): string => (typeof source === 'string' ? source : 'config object');
