/**
 * Opens the source and the output store a URL names, through the connector registered for its
 * scheme (src/compose/connectors.ts lists them; src/pipeline/connector.ts is the contract).
 * Connectors load their code only when their scheme is used, so a local run never loads kafkajs
 * or the AWS SDK.
 */
import './connectors.js';
import { inputConnector, outputConnector, type ConnectorConfig, type InputContext, type OpenedInput, type OutputTarget } from '../pipeline/connector.js';
import type { ObjectStore } from '../pipeline/storage/object-store.js';
import { tableLogOf } from './table-log.js';

export { findInputConnector, inputConnector, inputConnectors, outputConnector, type InputConnector, type OpenedInput, type OutputTarget } from '../pipeline/connector.js';

/** An s3:// URL (output checks that only a local folder needs skip it). */
export const isS3Url = (s: string | undefined): s is string => typeof s === 'string' && s.startsWith('s3://');

/** `--out` as a store; an S3 bucket is checked before any work starts. */
export async function openOutput(out: string, config: ConnectorConfig): Promise<OutputTarget> {
  return outputConnector(out).open(out, config);
}

/** Where messages say `url` is, as an output (an absolute folder, or the URL without trailing slashes). */
export const outputLocation = (url: string): string => outputConnector(url).location(url);

/** What the caller gives an input; the publishing of found ranges is wired here. */
export type InputOptions = Omit<InputContext, 'publishCommitted'>;

export async function openInput(url: string, ctx: InputOptions): Promise<OpenedInput> {
  const connector = inputConnector(url);
  return connector.open(url, { ...ctx, publishCommitted: publisher(ctx.store) });
}

/** A range an earlier owner committed but did not publish is published by whoever finds it (the committer loads on first use). */
function publisher(store: ObjectStore): (manifestKey: string) => Promise<void> {
  let committer: Promise<{ publishAt(key: string): Promise<void> }> | undefined;
  return async (key) => {
    const tableLog = tableLogOf(store);
    committer ??= import('../pipeline/commit/shard-commit.js').then((m) => new m.ShardCommitter(store, tableLog ? { tableLog } : {}));
    await (await committer).publishAt(key);
  };
}
