import { benchBatchCost } from './batch-cost.js';
import { benchCpu } from './cpu.js';
import { benchDeliberation } from './deliberation.js';
import { benchMemory } from './memory.js';
import { machine } from './common.js';
import { benchEvalLadder } from './eval-ladder.js';
import { benchGrounding } from './grounding.js';
import { frontierFromEnv } from './frontier.js';
import { benchKafka } from './kafka.js';
import { benchLocal } from './local.js';
import { benchPasses } from './passes.js';
import { benchSegmentation } from './segment.js';
import { benchThroughput } from './throughput.js';
import { benchView } from './view.js';
import { benchDelta } from './delta.js';
import { benchWholeRun } from './whole-run.js';

/** `npm run bench [-- name...]`: prints Markdown tables for docs/benchmarks.md. */
const BENCHES: Record<string, () => Promise<string> | string> = {
  segment: benchSegmentation,
  cpu: () => benchCpu(),
  throughput: () => benchThroughput(800),
  memory: () => benchMemory(),
  'eval-ladder': () => benchEvalLadder(),
  passes: () => benchPasses(),
  grounding: () => benchGrounding(),
  local: () => benchLocal(),
  deliberation: () => benchDeliberation(),
  frontier: () => frontierFromEnv(),
  kafka: () => benchKafka(),
  'whole-run': () => benchWholeRun(),
  view: () => benchView(),
  delta: () => benchDelta(),
  'batch-cost': () => benchBatchCost(),
};

const wanted = process.argv.slice(2);
const unknown = wanted.filter((w) => !(w in BENCHES));
if (unknown.length) {
  process.stderr.write(`unknown benchmark(s): ${unknown.join(', ')}; known: ${Object.keys(BENCHES).join(', ')}\n`);
  process.exit(2);
}
process.stdout.write(`<!-- ${machine()}, ${new Date().toISOString().slice(0, 10)} -->\n\n`);
for (const name of wanted.length ? wanted : Object.keys(BENCHES)) {
  process.stdout.write(`### ${name}\n\n${await BENCHES[name]!()}\n\n`);
}
