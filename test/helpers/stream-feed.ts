/** Writing records into a juryStream the way a source under backpressure does. */
import { once } from 'node:events';
import type { Writable } from 'node:stream';

/** Writes `records` in, waiting for 'drain' whenever write() says so, then ends; counts what it pulled. */
export function feed(stream: Writable, records: Iterable<unknown>): { pulled: () => number; done: Promise<void> } {
  let pulled = 0;
  const done = (async () => {
    for (const r of records) {
      pulled++;
      if (!stream.write(r)) await once(stream, 'drain');
    }
    stream.end();
  })();
  return { pulled: () => pulled, done };
}
