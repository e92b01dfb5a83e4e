/**
 * Entry of the file connector: local paths, a file or folder of JSONL / Parquet as the input
 * and a folder as the output (what any --input or --out without a `scheme://` is). The reader
 * under connectors/file/ loads when a run opens an input.
 */
import { resolve } from 'node:path';
import { registerInput, registerOutput } from '../src/pipeline/connector.js';
import { LocalObjectStore } from '../src/pipeline/storage/object-store.js';

registerInput({
  scheme: null,
  help: 'JSONL (.jsonl, .jsonl.gz, .jsonl.zst), Parquet, or a folder of them',
  place: 'local',
  resumesFromGroup: false,
  async open(url) {
    const source = await (await import('./file/index.js')).openFileSource(url);
    return { source, sinks: [], sequentialUnits: true, resumesFromGroup: false, close: () => source.close() };
  },
});

registerOutput({
  scheme: null,
  location: (url) => resolve(url),
  async open(url) {
    const root = resolve(url);
    return { store: new LocalObjectStore(root), location: root };
  },
});
