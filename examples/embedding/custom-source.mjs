// Example 3 (docs/embedding.md): the whole stage over a source you write, with the usual shards,
// manifests and resume. Each record says where it sits (a unit and an offset in it): ranges are
// cut by them, and a second run skips what is already committed.
//   node custom-source.mjs [out-folder] [jury.yaml]
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { runStage } from 'reasoning-jury';

const here = (name) => fileURLToPath(new URL(name, import.meta.url));
const [output = 'shards', config = here('jury.yaml')] = process.argv.slice(2);

/** Your source: an object-store lister, a crawler's output, a database cursor... Here: the bundled traces, twice over. */
async function* crawl() {
  const lines = (await readFile(here('../traces/demo.jsonl'), 'utf8')).split('\n').filter(Boolean);
  for (const [batch, suffix] of [['batch-1', 'a'], ['batch-2', 'b']]) {
    for (const [offset, line] of lines.entries()) {
      const record = JSON.parse(line);
      yield { record: { ...record, id: `${record.id}-${suffix}` }, unit: batch, offset };
    }
  }
}

const summary = await runStage({ source: crawl(), output, config, sourceName: 'crawler', rangeRecords: 4 });
console.log(`read ${summary.read}, judged ${summary.judged}, dead letters ${summary.dead_letters}, already committed ${summary.skipped_committed}, ranges committed ${summary.ranges_committed}`);
