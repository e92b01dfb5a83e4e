/**
 * `--input stdin://`: JSONL piped into the process, read as one unit named `stdin` whose
 * offsets are line numbers, like a file's. It resumes by the output's manifests as a file does:
 * piping the same lines again skips the committed ranges (and stops, or re-judges, when their
 * lines changed, --on-changed-input). The whole connector is this module and the line in
 * src/compose/connectors.ts that imports it (docs/extending.md walks through it).
 *
 * It lives beside the file connector because it reads the same JSONL with the same line reader.
 */
import type { Readable } from 'node:stream';
import { registerInput } from '../../src/pipeline/connector.js';
import { DEFAULT_MAX_RAW_TEXT_BYTES, type Source, type SourceItem, type SourceProgress } from '../../src/pipeline/source.js';
import type { ByteCounter } from './byte-stream.js';

/** The unit every stdin record belongs to (position.unit). */
export const STDIN_UNIT = 'stdin';

async function* counted(stream: Readable, counter: ByteCounter): AsyncGenerator<Uint8Array> {
  for await (const chunk of stream) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Uint8Array);
    counter.bytesRead += bytes.length;
    yield bytes;
  }
}

/** JSONL lines of a readable stream as a Source; one-shot, like every source. */
export class StdinSource implements Source {
  readonly name = 'stdin';
  private readonly counter: ByteCounter = { bytesRead: 0 };
  private items = 0;
  private iterator: AsyncGenerator<SourceItem> | undefined;

  constructor(private readonly stream: Readable = process.stdin) {}

  [Symbol.asyncIterator](): AsyncGenerator<SourceItem> {
    if (this.iterator) throw new Error('stdin: a source can be iterated only once');
    this.iterator = this.run();
    return this.iterator;
  }

  private async *run(): AsyncGenerator<SourceItem> {
    // The line reader loads with the first read, so registering stdin:// costs a command nothing.
    const { readJsonlBytes } = await import('./jsonl-source.js');
    const opts = { sourceName: 'stdin', maxLineBytes: 16 * 1024 * 1024, maxRawTextBytes: DEFAULT_MAX_RAW_TEXT_BYTES };
    for await (const item of readJsonlBytes(counted(this.stream, this.counter), STDIN_UNIT, opts)) {
      this.items++;
      yield item;
    }
  }

  progress(): SourceProgress {
    return { items: this.items, bytesRead: this.counter.bytesRead };
  }

  async close(): Promise<void> {
    await this.iterator?.return(undefined);
  }
}

registerInput({
  scheme: 'stdin',
  help: 'stdin:// (JSONL piped in)',
  place: 'stream',
  resumesFromGroup: false,
  readsStdin: true,
  async open() {
    const source = new StdinSource();
    return { source, sinks: [], sequentialUnits: true, resumesFromGroup: false, close: () => source.close() };
  },
});
