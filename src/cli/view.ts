import type { Command } from 'commander';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { recordReviews } from '../compose/review.js';
import { packageRoot } from '../util/paths.js';
import { isLoopback, startViewServer } from '../view/server.js';
import { UsageError } from './io.js';
import { withOutputLease } from './lease-options.js';
import { defaultReviewer, openReviewedOutput } from './review.js';

interface ViewFlags {
  port: string;
  host: string;
  token?: string;
  reviewer?: string;
}

export function registerView(program: Command): void {
  program
    .command('view')
    .description('browse a committed output in a local web app: records, one record in full, an overview, and a review queue')
    .argument('<out>', 'the output of a `run` (folder or s3://bucket/prefix); only what its manifests list is read')
    .option('--port <n>', 'port to listen on (0: any free one)', '8765')
    .option('--host <addr>', 'address to listen on; anything but loopback asks every request for a token', '127.0.0.1')
    .option('--token <t>', 'the token to ask for (default: env RJ_VIEW_TOKEN, else a random one, printed in the URL, when --host is not loopback); prefer the env var: arguments show in ps')
    .option('--reviewer <name>', 'name stored with the reviews made in the page (default: the login name)')
    .addHelpText(
      'after',
      `
Prints the URL to open and serves until Ctrl-C. Nothing is fetched from the network; traces are
shown as text, never as HTML. Keep / drop in the page append to OUT/reviews/ (taking OUT's lease
for the moment of the commit, so not while a run writes OUT); \`decide --shards OUT\` then writes the
reviewed decisions. Manual: docs/viewer.md.

Example:
  reasoning-jury view out/                 # http://127.0.0.1:8765/
  reasoning-jury view s3://bucket/out --host 0.0.0.0 --port 9000`,
    )
    .action(async (outArg: string, opts: ViewFlags) => {
      const port = Number(opts.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be 0..65535 (got "${opts.port}")`);
      const out = await openReviewedOutput(outArg);
      if (!(await out.store.list('_commits/')).some((k) => k.endsWith('.json'))) throw new UsageError(`${out.location} holds no committed ranges (no _commits/*.json): nothing to view`);
      const given = opts.token ?? process.env.RJ_VIEW_TOKEN;
      const token = given ?? (isLoopback(opts.host) ? undefined : randomBytes(18).toString('base64url'));
      const reviewer = opts.reviewer ?? defaultReviewer();
      const view = await startViewServer({
        store: out.store,
        location: out.location,
        host: opts.host,
        port,
        reviewer,
        staticDir: join(packageRoot(), 'viewer'),
        ...(token ? { token } : {}),
        submitReview: async (r, known) => {
          const [row] = await recordReviews(out.store, [r], { origin: 'view', reviewer, known, withLease: (work) => withOutputLease(out, 'review', {}, (lease) => work(() => lease.confirmHeld())) });
          return row!;
        },
      }).catch((err: NodeJS.ErrnoException) => {
        throw new UsageError(err.code === 'EADDRINUSE' ? `--port ${port} is in use on ${opts.host}: pick another (--port 0 takes any free one)` : `cannot listen on ${opts.host}:${port}: ${err.message}`);
      });
      // A token we made is printed in the URL to open; one the user gave is theirs and is not echoed.
      const shown = token === undefined ? view.url : given === undefined ? `${view.url}?token=${token}` : `${view.url}?token=<your token>`;
      process.stdout.write(`viewing ${out.location} at ${shown}  (Ctrl-C stops)\n`);
      view.ready.then(
        (ix) => process.stdout.write(`${ix.n} record(s) in ${ix.manifests.length} committed range(s) ready\n`),
        (err: Error) => process.stderr.write(`cannot read ${out.location}: ${err.message.split('\n')[0]}\n`),
      );
      await new Promise<void>((resolve) => {
        const stop = () => resolve();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
      await view.close();
    });
}
