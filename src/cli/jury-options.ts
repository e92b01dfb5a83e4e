/**
 * What every judging command shares on its command line: the options and their help texts.
 * Constants only, so registering a command loads nothing of the jury (src/cli/jury-setup.ts
 * opens it when a command runs).
 */
export interface JuryOptions {
  config?: string;
  gold?: string;
  auditLog?: string;
  cache?: boolean;
}

/** Options every judging command shares. */
export const JURY_OPTION_HELP = {
  config: 'jury config (YAML or JSON); without it, 3 simulated jurors + consolidation run in-process',
  gold: 'JSONL of labelled records that simulated endpoints grade against (labels in local input files are used too)',
  auditLog: 'append every model call to this JSONL audit log (overrides audit_log.path)',
  cache: 'do not read or write the response cache',
};
