import type { JuryConfig } from '../../schemas/config.js';
import { ConfigError } from '../config/load.js';
import type { ModelGateway } from '../llm/types.js';
import type { PromptSet } from '../prompts/templates.js';
import { createTaxonomyEnricher, type RowEnricher } from './enrich.js';
import { TaxonomyError } from './schema.js';

/**
 * The `run` command's entry point: the enricher when the config turns taxonomy assignment on,
 * else undefined. A bad taxonomy file is a config error (exit 2), found before any record.
 */
export function streamEnricher(config: JuryConfig, runtime: { gateway: ModelGateway; jury: { prompts: PromptSet } }): RowEnricher | undefined {
  if (!config.taxonomy?.enabled) return undefined;
  try {
    return createTaxonomyEnricher({ config, gateway: runtime.gateway, prompts: runtime.jury.prompts }).enrich;
  } catch (err) {
    // One line: a fatal error is one line on stderr, each problem after a ';'.
    if (err instanceof TaxonomyError) throw new ConfigError(`taxonomy.file: ${err.message.replace(/:?\s*\n\s*-?\s*/g, (m) => (m.startsWith(':') ? ': ' : '; '))}`);
    throw err;
  }
}
