#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../util/paths.js';
import { addLogOptions, applyLogSettings, fatalReport, jsonRequested, logOptionsOf, printFatal } from './logging.js';

type Register = (program: Command) => void;

/**
 * Every command's registration module, in the order `--help` lists them. Each is imported only
 * when needed: importing all of them loads most of the product (the jury, arrow, the model
 * clients), about 0.4 s of CPU, and `run` needs none of it on this thread.
 */
const COMMANDS: ReadonlyArray<readonly [string, () => Promise<Register>]> = [
  ['run', async () => (await import('./run.js')).registerRun],
  ['estimate', async () => (await import('./estimate.js')).registerEstimate],
  ['decide', async () => (await import('./decide.js')).registerDecide],
  ['review', async () => (await import('./review.js')).registerReview],
  ['view', async () => (await import('./view.js')).registerView],
  ['repair', async () => (await import('./repair.js')).registerRepair],
  ['judge', async () => (await import('./judge.js')).registerJudge],
  ['segment', async () => (await import('./segment.js')).registerSegment],
  ['simulate', async () => (await import('./simulate.js')).registerSimulate],
  ['taxonomy', async () => (await import('./taxonomy.js')).registerTaxonomy],
  ['report', async () => (await import('./report.js')).registerReport],
  ['shards', async () => (await import('./shards.js')).registerShards],
  ['batch', async () => (await import('./batch.js')).registerBatch],
  ['models', async () => (await import('./models.js')).registerModels],
  ['serve-local', async () => (await import('./serve-local.js')).registerServeLocal],
  ['eval', async () => (await import('./eval.js')).registerEval],
];

/**
 * The commands to register for this command line. The program itself takes no arguments, only
 * --version, --help and the log options, so when the first other argument names a command,
 * commander dispatches to that command whatever its siblings are: registering it alone changes
 * nothing. Anything else (help, no command, an unknown one that gets a "did you mean") sees them all.
 */
function commandsFor(argv: readonly string[]): ReadonlyArray<readonly [string, () => Promise<Register>]> {
  const first = firstNonLogArgument(argv);
  // --version prints and exits before any command is looked at.
  if (first === '-V' || first === '--version') return [];
  const named = COMMANDS.find(([name]) => name === first);
  return named ? [named] : COMMANDS;
}

/** The first argument that is not a program-level log option (they may come before the command). */
function firstNonLogArgument(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--log-format') i++;
    else if (a !== '--debug' && !a.startsWith('--log-format=')) return a;
  }
  return undefined;
}

const version = JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')).version as string;

const program = new Command()
  .name('reasoning-jury')
  .description('Judge LLM reasoning traces with a jury of LLMs and emit curation data.')
  .version(version)
  .showHelpAfterError('(add --help for usage)');
addLogOptions(program);

// Commander's own errors (an unknown option) come before any action: as JSON too when asked.
if (jsonRequested(process.argv.slice(2))) {
  applyLogSettings({ format: 'json', debug: false });
  program.configureOutput({
    outputError: (text) => printFatal({ message: text.trim().replace(/^error: /, ''), fields: {}, kind: 'usage' }),
    // "(add --help for usage)" after an error: not an event; --help itself goes to stdout.
    writeErr: () => undefined,
  });
}

// One at a time, so modules evaluate in the same order on every run.
for (const [, load] of commandsFor(process.argv.slice(2))) (await load())(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  // Commander's own error (already printed) carries its exit code: the one foreign error mapped here.
  if (err instanceof CommanderError) process.exit(err.exitCode);
  // An action may have failed before the preAction hook ran: log as the command line asked.
  applyLogSettings(logOptionsOf(program));
  // The error's kind decides the code (util/errors.ts); `run` reports its worker's errors as a ReportedError.
  process.exit(printFatal(fatalReport(err)));
}
