import type { Command } from 'commander';
import { FieldMapping } from '../../schemas/trace.js';
import { mapRecord } from '../pipeline/record-mapping.js';
import { renderSteps } from '../prompts/frame.js';
import { segmentRecord, type SegmentationMode } from '../segment/index.js';
import { parseJsonInput, readStdin, UsageError, writeJson } from './io.js';

export function registerSegment(program: Command): void {
  program
    .command('segment')
    .description('split a reasoning trace into [STEP-n] steps and print them')
    .option('--mode <mode>', 'auto | regex | blank_line | given', 'auto')
    .option('--text', 'stdin is plain trace text instead of a JSON record')
    .option('--format <format>', 'json (one object per step) | marked (as jurors see it)', 'json')
    .addHelpText('after', '\nExamples:\n  echo \'{"id":"r1","problem":"p","trace":"A.\\n\\nB."}\' | reasoning-jury segment\n  reasoning-jury segment --text --format marked < trace.txt')
    .action(async (opts: { mode: string; text?: boolean; format: string }) => {
      if (!['auto', 'regex', 'blank_line', 'given'].includes(opts.mode)) throw new UsageError(`--mode must be auto, regex, blank_line or given (got "${opts.mode}")`);
      if (!['json', 'marked'].includes(opts.format)) throw new UsageError(`--format must be json or marked (got "${opts.format}")`);
      const input = await readStdin();
      let source: { trace?: string; steps?: string[] };
      if (opts.text) source = { trace: input };
      else {
        const mapped = mapRecord(parseJsonInput(input, 'a trace record'), FieldMapping.parse({}));
        if (!mapped.ok) throw new UsageError(`invalid record: ${mapped.error}`);
        source = mapped.record;
      }
      const steps = segmentRecord(source, opts.mode as SegmentationMode);
      if (opts.format === 'marked') process.stdout.write(`${renderSteps(steps)}\n`);
      else for (const s of steps) writeJson({ step: s.index, text: s.text }, false);
    });
}
