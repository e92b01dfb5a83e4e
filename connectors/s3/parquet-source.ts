/**
 * Parquet objects under s3://bucket/prefix as a Source: footer and row groups are fetched with
 * ranged GETs (hyparquet over S3RangeReader), one row group in memory at a time.
 *
 * Positions are { source: 's3', unit: 's3://bucket/key', offset: row in the object }.
 * Checkpoints are the commit manifests themselves: before reading an object, the chain of
 * committed ranges from row 0 gives the first row still to do, so finished objects cost one
 * footer read and finished row groups are not fetched at all. Later committed ranges (ranges
 * commit out of order) are skipped by the stage's range planner.
 *
 * Scale-out: with world_size workers, worker `rank` takes every world_size-th object of the
 * sorted listing. Keep the listing stable during a backfill; a rerun skips what is committed.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { parquetReadObjects, type FileMetaData } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import type { SourcePosition } from '../../schemas/trace.js';
import { normalizeParquetValue, readParquetMetadata } from '../../src/util/parquet.js';
import { inputColumns } from '../../src/util/parquet-arrow.js';
import { unitToken } from '../../src/pipeline/positions.js';
import { deadItem, type SizeHint, type Source, type SourceItem, type SourceProgress, type CommittedRanges } from '../../src/pipeline/source.js';
import { describeS3Error, parseS3Url, s3Url, type S3Location } from './client.js';
import { S3RangeReader, type S3ObjectRef } from './range-reader.js';

export interface S3SourceOptions {
  /** this worker's index, 0-based (default 0) */
  rank?: number;
  /** number of workers sharing the listing (default 1) */
  worldSize?: number;
  /** ranges already committed in the output, to resume without re-reading them */
  committed?: CommittedRanges;
  /** position.source (default "s3") */
  sourceName?: string;
}

/** Hadoop/Spark markers and temp folders (`_SUCCESS`, `_temporary/`, `.x.crc`) are not data. */
function isHiddenPath(rel: string): boolean {
  return rel.split('/').some((seg) => seg.startsWith('_') || seg.startsWith('.'));
}

/** Every `.parquet` object under the location, sorted by key. */
export async function listParquetObjects(client: S3Client, loc: S3Location): Promise<S3ObjectRef[]> {
  const out: S3ObjectRef[] = [];
  let token: string | undefined;
  const prefix = loc.prefix ? `${loc.prefix}/` : '';
  do {
    let res;
    try {
      res = await client.send(new ListObjectsV2Command({ Bucket: loc.bucket, Prefix: prefix, ...(token ? { ContinuationToken: token } : {}) }));
    } catch (err) {
      throw new Error(`cannot list ${s3Url(loc)}: ${describeS3Error(err)}`);
    }
    for (const o of res.Contents ?? []) {
      if (!o.Key || !o.Key.toLowerCase().endsWith('.parquet') || isHiddenPath(o.Key.slice(prefix.length))) continue;
      out.push({ bucket: loc.bucket, key: o.Key, size: o.Size ?? 0, ...(o.ETag ? { etag: o.ETag } : {}) });
    }
    token = res.IsTruncated ? res.NextContinuationToken : undefined;
  } while (token);
  return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** This worker's share: objects rank, rank + world, rank + 2*world, ... of the sorted list. */
export function shardObjects<T>(objects: readonly T[], rank: number, worldSize: number): T[] {
  if (!Number.isInteger(worldSize) || worldSize < 1) throw new Error(`world size must be a positive integer (got ${worldSize})`);
  if (!Number.isInteger(rank) || rank < 0 || rank >= worldSize) throw new Error(`rank must be in 0..${worldSize - 1} (got ${rank})`);
  return objects.filter((_, i) => i % worldSize === rank);
}

/** First row not covered by the chain of committed ranges starting at row 0. */
export function resumeRow(committed: CommittedRanges | undefined, token: string): number {
  const ranges = committed?.get(token);
  let row = 0;
  for (let last = ranges?.get(row); last !== undefined; last = ranges?.get(row)) row = last + 1;
  return row;
}

export class S3ParquetSource implements Source {
  readonly name: string;
  private readonly sourceName: string;
  private items = 0;
  private bytesRead = 0;
  /** objects skipped because every row was committed */
  objectsDone = 0;
  /** row groups not fetched because they were committed */
  rowGroupsSkipped = 0;
  private iterator: AsyncGenerator<SourceItem> | undefined;
  private closed = false;

  constructor(
    private readonly client: S3Client,
    readonly location: S3Location,
    readonly objects: readonly S3ObjectRef[],
    private readonly opts: S3SourceOptions = {},
  ) {
    this.name = s3Url(location);
    this.sourceName = opts.sourceName ?? 's3';
  }

  [Symbol.asyncIterator](): AsyncGenerator<SourceItem> {
    if (this.iterator) throw new Error(`${this.name}: a source can be iterated only once`);
    this.iterator = this.run();
    return this.iterator;
  }

  private async *run(): AsyncGenerator<SourceItem> {
    for (const obj of this.objects) {
      if (this.closed) return;
      for await (const item of this.readObject(obj)) {
        this.items++;
        yield item;
      }
    }
  }

  private async *readObject(obj: S3ObjectRef): AsyncGenerator<SourceItem> {
    const unit = `s3://${obj.bucket}/${obj.key}`;
    const pos = (offset: number): SourcePosition => ({ source: this.sourceName, unit, offset });
    const start = resumeRow(this.opts.committed, unitToken({ source: this.sourceName, unit }));
    const reader = new S3RangeReader(this.client, obj);
    const noRaw = { rawText: '', rawTextTruncated: false };
    try {
      let meta: FileMetaData;
      try {
        meta = await readParquetMetadata(reader);
      } catch (e) {
        if (start === 0) yield deadItem(pos(0), `not a readable Parquet object: ${(e as Error).message}`, noRaw);
        return;
      }
      const columns = inputColumns(meta);
      if (start >= Number(meta.num_rows)) {
        this.objectsDone++;
        return;
      }
      let groupStart = 0;
      for (let g = 0; g < meta.row_groups.length && !this.closed; g++) {
        const groupEnd = groupStart + Number(meta.row_groups[g]!.num_rows);
        const from = Math.max(groupStart, start);
        if (from >= groupEnd) {
          if (groupEnd > groupStart) this.rowGroupsSkipped++;
          groupStart = groupEnd;
          continue;
        }
        let rows: Record<string, unknown>[];
        try {
          rows = await parquetReadObjects({ file: reader, metadata: meta, rowStart: from, rowEnd: groupEnd, compressors });
        } catch (e) {
          yield deadItem(pos(from), `row group ${g} (rows ${from}-${groupEnd - 1}, ${groupEnd - from} rows lost) unreadable: ${(e as Error).message}`, noRaw);
          groupStart = groupEnd;
          continue;
        }
        for (let i = 0; i < rows.length; i++) {
          const row = normalizeParquetValue(rows[i]);
          rows[i] = undefined as never; // let rows already handed out go
          yield { position: pos(from + i), ok: true, raw: row, ...(columns ? { columns } : {}) };
        }
        groupStart = groupEnd;
      }
    } finally {
      this.bytesRead += reader.bytesRead;
    }
  }

  /** totalBytes from the listing; totalRows from footers when there are few objects. */
  async sizeHint(): Promise<SizeHint> {
    const totalBytes = this.objects.reduce((n, o) => n + o.size, 0);
    if (this.objects.length === 0 || this.objects.length > 64) return { totalBytes };
    try {
      let totalRows = 0;
      for (const o of this.objects) totalRows += Number((await readParquetMetadata(new S3RangeReader(this.client, o))).num_rows);
      return { totalRows, totalBytes };
    } catch {
      return { totalBytes }; // an unreadable footer shows up as a dead letter when read
    }
  }

  progress(): SourceProgress {
    return { items: this.items, bytesRead: this.bytesRead };
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.iterator?.return(undefined);
  }
}

/** Lists s3://bucket/prefix, keeps this worker's share, and opens it as a Source. */
export async function openS3ParquetSource(client: S3Client, url: string, opts: S3SourceOptions = {}): Promise<S3ParquetSource> {
  const loc = parseS3Url(url);
  const all = await listParquetObjects(client, loc);
  const mine = shardObjects(all, opts.rank ?? 0, opts.worldSize ?? 1);
  return new S3ParquetSource(client, loc, mine, opts);
}
