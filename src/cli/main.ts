#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../config/load.js';
import { packageRoot } from '../util/paths.js';
import { SegmentationError } from '../segment/index.js';
import { UsageError } from './io.js';
import { registerEval } from './eval.js';
import { registerJudge } from './judge.js';
import { registerReport } from './report.js';
import { registerModels } from './models.js';
import { registerRun } from './run.js';
import { registerSegment } from './segment.js';
import { registerServeLocal } from './serve-local.js';
import { registerSimulate } from './simulate.js';
import { registerTaxonomy } from './taxonomy.js';

const version = JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')).version as string;

const program = new Command()
  .name('reasoning-jury')
  .description('Judge LLM reasoning traces with a jury of LLMs and emit curation data.')
  .version(version)
  .showHelpAfterError('(add --help for usage)');

registerRun(program);
registerJudge(program);
registerSegment(program);
registerSimulate(program);
registerTaxonomy(program);
registerReport(program);
registerModels(program);
registerServeLocal(program);
registerEval(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) process.exit(err.exitCode);
  const known = err instanceof UsageError || err instanceof ConfigError || err instanceof SegmentationError;
  process.stderr.write(`reasoning-jury: ${known ? (err as Error).message : (err as Error).stack ?? String(err)}\n`);
  process.exit(known ? 2 : 1);
}
