import type { Command } from 'commander';
import { mapRecord, scoreFieldsOf } from '../pipeline/record-mapping.js';
import { prepareRecord } from '../pipeline/steps/segment.js';
import { juryOver } from '../api/jury-core.js';
import { parseJsonInput, readStdin, UsageError, writeJson } from './io.js';
import { juryOption, loadJuryConfig, openJury, type JuryOptions } from './jury-setup.js';
import { logger } from '../util/log.js';

const log = logger('cli');

export function registerJudge(program: Command): void {
  program
    .command('judge')
    .description('judge one trace record (JSON on stdin) and print its verdict JSON')
    .addOption(juryOption('config'))
    .addOption(juryOption('gold'))
    .addOption(juryOption('auditLog'))
    .addOption(juryOption('cache'))
    .option('--pretty', 'indent the verdict JSON')
    .addHelpText(
      'after',
      `
The record: {"id", "problem", "trace" | "steps": [...], "final_solution"?, "meta"?, "gold"?}
(field names can be remapped with input.mapping in the config).
A verdict whose jurors mostly failed is still printed, with "error" set; the exit code is 0.

Example:
  echo '{"id":"r1","problem":"2+2?","trace":"2+2=5.\\n\\nSo 5."}' | reasoning-jury judge --pretty`,
    )
    .action(async (opts: JuryOptions & { pretty?: boolean }) => {
      const text = await readStdin();
      const config = loadJuryConfig(opts);
      // Check the input before starting any simulator or connection.
      const mapped = mapRecord(parseJsonInput(text, 'a trace record'), config.input.mapping, { maxSteps: config.segmentation.max_steps }, scoreFieldsOf(config));
      if (!mapped.ok) throw new UsageError(`invalid record: ${mapped.error}`);
      const prepared = prepareRecord(mapped.record, config);
      if (!prepared.ok) throw new UsageError(`cannot judge record ${mapped.record.id}: ${prepared.error}`);
      const runtime = await openJury(config, opts, { records: [mapped.record] });
      try {
        // The library's jury (src/api) over the runtime, stopping after derive as this command always has.
        const { verdict } = await juryOver(config, runtime, { refine: false }).judge(JSON.parse(text));
        writeJson(verdict, opts.pretty === true);
        if (verdict.error) log.warn(`no verdict could be formed: ${verdict.error}`, { record_id: verdict.record_id });
        else if (verdict.degraded) log.warn(`verdict is degraded: ${verdict.degraded_reason}`, { record_id: verdict.record_id });
      } finally {
        await runtime.close();
      }
    });
}
