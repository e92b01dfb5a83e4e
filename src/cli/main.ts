#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../util/paths.js';
import { OUTAGE_EXIT_CODE, RunStoppedError, UsageError } from './io.js';

type Register = (program: Command) => void;

/**
 * Every command's registration module, in the order `--help` lists them. Each is imported only
 * when needed: importing all of them loads most of the product (the jury, arrow, the model
 * clients), about 0.4 s of CPU, and `run` needs none of it on this thread.
 */
const COMMANDS: ReadonlyArray<readonly [string, () => Promise<Register>]> = [
  ['run', async () => (await import('./run.js')).registerRun],
  ['judge', async () => (await import('./judge.js')).registerJudge],
  ['segment', async () => (await import('./segment.js')).registerSegment],
  ['simulate', async () => (await import('./simulate.js')).registerSimulate],
  ['taxonomy', async () => (await import('./taxonomy.js')).registerTaxonomy],
  ['report', async () => (await import('./report.js')).registerReport],
  ['models', async () => (await import('./models.js')).registerModels],
  ['serve-local', async () => (await import('./serve-local.js')).registerServeLocal],
  ['eval', async () => (await import('./eval.js')).registerEval],
];

/**
 * The commands to register for this command line. The program itself takes no arguments and
 * only the --version and --help options, so when the first argument names a command, commander
 * dispatches to that command whatever its siblings are: registering it alone changes nothing.
 * Anything else (help, no command, an unknown one that gets a "did you mean") sees them all.
 */
function commandsFor(argv: readonly string[]): ReadonlyArray<readonly [string, () => Promise<Register>]> {
  // --version prints and exits before any command is looked at.
  if (argv[0] === '-V' || argv[0] === '--version') return [];
  const named = COMMANDS.find(([name]) => name === argv[0]);
  return named ? [named] : COMMANDS;
}

/** A failure the user can act on: one line, exit code 2 (the error classes load only on failure). */
async function isKnownError(err: unknown): Promise<boolean> {
  if (err instanceof UsageError) return true;
  const [{ ConfigError }, { SegmentationError }] = await Promise.all([import('../config/load.js'), import('../segment/index.js')]);
  return err instanceof ConfigError || err instanceof SegmentationError;
}

const version = JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')).version as string;

const program = new Command()
  .name('reasoning-jury')
  .description('Judge LLM reasoning traces with a jury of LLMs and emit curation data.')
  .version(version)
  .showHelpAfterError('(add --help for usage)');

// One at a time, so modules evaluate in the same order on every run.
for (const [, load] of commandsFor(process.argv.slice(2))) (await load())(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) process.exit(err.exitCode);
  // `judge` and `eval` meet an outage in this thread; `run` reports it from its worker.
  if (err instanceof RunStoppedError || (err instanceof Error && err.name === 'EndpointOutageError')) {
    process.stderr.write(`reasoning-jury: ${err.message}\n`);
    process.exit(OUTAGE_EXIT_CODE);
  }
  const known = await isKnownError(err);
  process.stderr.write(`reasoning-jury: ${known ? (err as Error).message : (err as Error).stack ?? String(err)}\n`);
  process.exit(known ? 2 : 1);
}
