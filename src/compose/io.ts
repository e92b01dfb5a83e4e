/**
 * Picks the source and the output store by URL scheme. Connectors are loaded only when their
 * scheme is used, so a local run never loads kafkajs or the AWS SDK.
 *
 *   input   kafka://topic[,topic][?group=id] | s3://bucket/prefix | a local file or folder
 *   output  s3://bucket/prefix | a local folder
 */
import { resolve } from 'node:path';
import type { JuryConfig } from '../../schemas/config.js';
import { LocalObjectStore, type ObjectStore } from '../pipeline/object-store.js';
import type { RangeSink } from '../pipeline/sink.js';
import type { CommittedRanges, Source } from '../pipeline/source.js';

export const isKafkaUrl = (s: string | undefined): s is string => typeof s === 'string' && s.startsWith('kafka://');
export const isS3Url = (s: string | undefined): s is string => typeof s === 'string' && s.startsWith('s3://');

export interface OutputTarget {
  store: ObjectStore;
  /** absolute folder or s3:// URL, for messages */
  location: string;
}

/** A `scheme://` this stage does not read or write: refused rather than taken for a folder name. */
export function unsupportedScheme(url: string, allowed: readonly string[]): string | null {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(url);
  if (!m || allowed.includes(m[1]!.toLowerCase())) return null;
  return `unsupported URL scheme "${m[1]}://" in ${url} (use ${allowed.map((s) => `${s}://`).join(', ')} or a local path)`;
}

/** `--out` as a store; an S3 bucket is checked before any work starts. */
export async function openOutput(out: string, config: Pick<JuryConfig, 's3'>): Promise<OutputTarget> {
  const bad = unsupportedScheme(out, ['s3']);
  if (bad) throw new Error(bad);
  if (!isS3Url(out)) {
    const root = resolve(out);
    return { store: new LocalObjectStore(root), location: root };
  }
  const { openS3Output } = await import('../../connectors/s3/output.js');
  return openS3Output(out, config.s3);
}

export interface InputContext {
  config: Pick<JuryConfig, 'kafka' | 's3'>;
  /** the output: a Kafka source reads earlier owners' manifests there */
  store: ObjectStore;
  /** ranges already in the output (file and S3 inputs skip them) */
  committed: CommittedRanges;
  rank: number;
  worldSize: number;
  untilCaughtUp: boolean;
  signal: AbortSignal;
  /** kafka:// input: write an output another consumer group has recorded (with a warning) */
  allowOtherGroup?: boolean;
  /** the output's location, for messages */
  location?: string;
}

export interface OpenedInput {
  source: Source;
  sinks: RangeSink[];
  /** units arrive one after another (files, objects), or interleave (partitions) */
  sequentialUnits: boolean;
  /** resumes by the consumer group's offsets rather than by the output's manifests */
  resumesFromGroup: boolean;
  close(): Promise<void>;
}

export async function openInput(url: string, ctx: InputContext): Promise<OpenedInput> {
  const bad = unsupportedScheme(url, ['kafka', 's3']);
  if (bad) throw new Error(bad);
  if (isKafkaUrl(url)) {
    const { openKafkaInput, kafkaSourceSetup } = await import('../../connectors/kafka/input.js');
    const { ShardCommitter } = await import('../pipeline/shard-commit.js');
    const committer = new ShardCommitter(ctx.store);
    // A range an earlier owner committed but did not publish is published by whoever finds it.
    const kafkaInput = await openKafkaInput(url, ctx.config.kafka);
    // One consumer group per output: another group's instances would race on every range.
    const { claimOutputForGroup } = await import('../../connectors/kafka/group-marker.js');
    const warning = await claimOutputForGroup(ctx.store, ctx.location ?? 'the output', kafkaInput.group, kafkaInput.topics, ctx.allowOtherGroup === true);
    if (warning) kafkaInput.log.warn(warning);
    const setup = kafkaSourceSetup(kafkaInput, ctx.store, { ...ctx, publishCommitted: (key) => committer.publishAt(key) });
    await setup.source.start().catch(async (err: unknown) => {
      await setup.close();
      throw err;
    });
    return { source: setup.source, sinks: setup.sinks, sequentialUnits: false, resumesFromGroup: true, close: setup.close };
  }
  const source = isS3Url(url) ? await openS3(url, ctx) : await (await import('../../connectors/file/index.js')).openFileSource(url);
  return { source, sinks: [], sequentialUnits: true, resumesFromGroup: false, close: () => source.close() };
}

async function openS3(url: string, ctx: InputContext): Promise<Source> {
  const [{ createS3Client }, { openS3ParquetSource }] = await Promise.all([import('../../connectors/s3/client.js'), import('../../connectors/s3/parquet-source.js')]);
  return openS3ParquetSource(createS3Client(ctx.config.s3), url, { rank: ctx.rank, worldSize: ctx.worldSize, committed: ctx.committed });
}
