import type { Command } from 'commander';
import { UsageError } from './io.js';
import { logger } from '../util/log.js';

const log = logger('simulate');

export function registerSimulate(program: Command): void {
  program
    .command('simulate')
    .description('serve the juror simulator: an OpenAI-compatible /v1/chat/completions and /v1/models, and the Files + Batches API (docs/simulator.md)')
    .option('-p, --port <port>', 'port to listen on (0 = any free port)', '8089')
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--profile <file>', 'simulator profile (YAML/JSON): per-model recall, false positives, latency, faults')
    .option('--gold <file>', 'JSONL of labelled trace records the simulated jurors grade against')
    .addHelpText('after', '\nPoint an endpoint at it with base_url: http://127.0.0.1:<port>/v1. Stops on SIGINT/SIGTERM.')
    .action(async (opts: { port: string; host: string; profile?: string; gold?: string }) => {
      const port = Number(opts.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be 0..65535 (got "${opts.port}")`);
      // Loaded on use: every command is registered at start-up, and only this one serves the simulator.
      const { defaultProfile, loadGoldFile, loadProfileFile, NO_GOLD, startSimulator } = await import('../sim/index.js');
      const profile = opts.profile ? loadProfileFile(opts.profile) : defaultProfile();
      const gold = opts.gold ? loadGoldFile(opts.gold) : NO_GOLD;
      for (const s of gold.skipped.slice(0, 5)) log.warn(`gold line ${s.line} skipped: ${s.reason}`);
      const sim = await startSimulator({ profile, gold, host: opts.host, port });
      process.stdout.write(`juror simulator listening on ${sim.url} (${gold.size} gold records)\n`);
      await new Promise<void>((resolve) => {
        const stop = () => resolve();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
      await sim.close();
    });
}
