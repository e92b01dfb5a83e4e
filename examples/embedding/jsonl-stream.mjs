// Example 1 (docs/embedding.md): a JSONL file -> juryStream -> your own JSONL writer.
//   node jsonl-stream.mjs [traces.jsonl] [results.jsonl] [jury.yaml]
// Backpressure runs end to end: a slow disk slows the jury, a slow jury slows the reading.
import { createReadStream, createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { juryStream } from 'reasoning-jury';

const here = (name) => fileURLToPath(new URL(name, import.meta.url));
const [input = here('../traces/demo.jsonl'), output = 'results.jsonl', config = here('jury.yaml')] = process.argv.slice(2);

/** One record per non-empty line; a line that is not JSON goes in as text and comes out as a dead letter. */
async function* records(path) {
  for await (const line of createInterface({ input: createReadStream(path), crlfDelay: Infinity })) {
    if (line.trim() === '') continue;
    try {
      yield JSON.parse(line);
    } catch {
      yield line;
    }
  }
}

/** Your own row format: here one line per record with its decision, or the dead letter's reason. */
async function* toJsonl(results) {
  for await (const r of results) {
    const row = r.ok ? { id: r.verdict.record_id, decision: r.decision.decision, defects: r.verdict.defects.length, confidence: r.verdict.confidence } : { index: r.index, dead_letter: r.reason };
    yield `${JSON.stringify(row)}\n`;
  }
}

await pipeline(records(input), juryStream({ config, concurrency: 8 }), toJsonl, createWriteStream(output));
console.log(`wrote ${output}`);
