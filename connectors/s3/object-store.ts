/**
 * ObjectStore over S3: the shard committer's storage when the output is s3://bucket/prefix.
 *
 * - A PutObject is atomic; big files go up as multipart uploads, which S3 shows only once
 *   CompleteMultipartUpload succeeds (a crash leaves an invisible, abortable upload).
 * - Keys matched by `createOnly` (commit manifests by default) are written with
 *   `If-None-Match: *`: when two writers race on one range, exactly one manifest wins and the
 *   loser gets ObjectExistsError instead of silently replacing the winner's.
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { COMMITS_PREFIX } from '../../src/pipeline/commit/layout.js';
import { assertKey, ObjectExistsError, type ObjectStore } from '../../src/pipeline/storage/object-store.js';

import { describeS3Error, httpStatus, isNotFound, isTransientS3Error, s3Url, type S3Location } from './client.js';

const MB = 1024 * 1024;

export interface S3StoreOptions {
  multipartThresholdBytes?: number;
  partSizeBytes?: number;
  /** keys written with If-None-Match: * (default: commit manifests) */
  createOnly?: (key: string) => boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A posix-backed S3 server (versitygw) answers 409 ExistingObjectIsDirectory to a write when a
 * delete of a sibling key removes their now-empty parent folder between the write's mkdir and its
 * link: a race inside the server, gone on the next try. A real folder at the key keeps answering
 * it, and the error is thrown after the last try. AWS S3 never sends it.
 */
async function throughFolderRace<T>(write: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (err) {
      if (attempt >= 5 || (err as { name?: unknown }).name !== 'ExistingObjectIsDirectory') throw err;
      await sleep(20 * attempt);
    }
  }
}

export class S3ObjectStore implements ObjectStore {
  readonly bucket: string;
  readonly prefix: string;
  private readonly threshold: number;
  private readonly partSize: number;
  private readonly createOnly: (key: string) => boolean;
  /** requests by kind, for tests and benchmarks */
  readonly stats = { puts: 0, multipartUploads: 0, parts: 0, gets: 0, lists: 0, heads: 0, conflicts: 0, copies: 0, deletes: 0 };

  constructor(
    readonly client: S3Client,
    location: S3Location,
    opts: S3StoreOptions = {},
  ) {
    this.bucket = location.bucket;
    this.prefix = location.prefix;
    this.threshold = opts.multipartThresholdBytes ?? 16 * MB;
    this.partSize = opts.partSizeBytes ?? 8 * MB;
    if (this.partSize < 5 * MB) throw new Error('S3 multipart parts must be at least 5 MB');
    this.createOnly = opts.createOnly ?? ((k) => k.startsWith(COMMITS_PREFIX));
  }

  private full(key: string): string {
    return this.prefix ? `${this.prefix}/${key}` : key;
  }

  private relative(fullKey: string): string {
    return this.prefix ? fullKey.slice(this.prefix.length + 1) : fullKey;
  }

  locate(key: string): string {
    assertKey(key);
    return s3Url({ bucket: this.bucket, prefix: this.prefix }, key);
  }

  isTransient(err: unknown): boolean {
    return isTransientS3Error(err);
  }

  async putObject(key: string, bytes: Uint8Array): Promise<void> {
    assertKey(key);
    if (this.createOnly(key)) return this.putIfAbsent(key, bytes);
    if (bytes.byteLength >= this.threshold) return this.putMultipart(key, bytes);
    this.stats.puts++;
    await throughFolderRace(() => this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: this.full(key), Body: bytes, ContentLength: bytes.byteLength })));
  }

  createObject(key: string, bytes: Uint8Array): Promise<void> {
    return this.putIfAbsent(key, bytes);
  }

  /** If-None-Match: * put; throws ObjectExistsError when the key exists. */
  async putIfAbsent(key: string, bytes: Uint8Array): Promise<void> {
    assertKey(key);
    for (let attempt = 1; ; attempt++) {
      this.stats.puts++;
      try {
        await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: this.full(key), Body: bytes, ContentLength: bytes.byteLength, IfNoneMatch: '*' }));
        return;
      } catch (err) {
        const status = httpStatus(err);
        if (status === 412) {
          this.stats.conflicts++;
          throw new ObjectExistsError(key);
        }
        // AWS answers 409 while another conditional write of the key is in flight: the
        // outcome is then decided, and the next attempt gets 200 or 412.
        if (status === 409 && attempt < 5) {
          await sleep(50 * attempt);
          continue;
        }
        throw err;
      }
    }
  }

  private async putMultipart(key: string, bytes: Uint8Array): Promise<void> {
    const Key = this.full(key);
    this.stats.multipartUploads++;
    const { UploadId } = await this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key }));
    if (!UploadId) throw new Error(`S3 returned no UploadId for ${this.locate(key)}`);
    try {
      const parts: { PartNumber: number; ETag: string }[] = [];
      for (let start = 0, n = 1; start < bytes.byteLength; start += this.partSize, n++) {
        const body = bytes.subarray(start, Math.min(start + this.partSize, bytes.byteLength));
        this.stats.parts++;
        const res = await this.client.send(new UploadPartCommand({ Bucket: this.bucket, Key, UploadId, PartNumber: n, Body: body, ContentLength: body.byteLength }));
        if (!res.ETag) throw new Error(`S3 returned no ETag for part ${n} of ${this.locate(key)}`);
        parts.push({ PartNumber: n, ETag: res.ETag });
      }
      await throughFolderRace(() => this.client.send(new CompleteMultipartUploadCommand({ Bucket: this.bucket, Key, UploadId, MultipartUpload: { Parts: parts } })));
    } catch (err) {
      // Best effort: an upload left behind is invisible and a bucket lifecycle rule reaps it.
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key, UploadId })).catch(() => undefined);
      throw err;
    }
  }

  /**
   * Server-side copy, then delete of the source: a reader of `to` sees the whole object or the
   * old one (CopyObject is atomic per object; parts are far below its 5 GB limit).
   */
  async move(from: string, to: string): Promise<void> {
    assertKey(from);
    assertKey(to);
    this.stats.copies++;
    const source = `${this.bucket}/${this.full(from).split('/').map(encodeURIComponent).join('/')}`;
    try {
      await throughFolderRace(() => this.client.send(new CopyObjectCommand({ Bucket: this.bucket, Key: this.full(to), CopySource: source })));
    } catch (err) {
      // A repeated publish: the first one already moved it.
      if (isNotFound(err) && (await this.exists(to))) return;
      throw err;
    }
    await this.delete(from);
  }

  /** Published staged parts and retracted ranges: S3 answers 204 whether or not the key was there. */
  async delete(key: string): Promise<void> {
    assertKey(key);
    this.stats.deletes++;
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.full(key) }));
  }

  async exists(key: string): Promise<boolean> {
    assertKey(key);
    this.stats.heads++;
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.full(key) }));
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  async get(key: string): Promise<Uint8Array | null> {
    assertKey(key);
    this.stats.gets++;
    try {
      const res = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.full(key) }));
      if (!res.Body) return new Uint8Array(0);
      return await res.Body.transformToByteArray();
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async list(prefix: string): Promise<string[]> {
    return this.listAfter(prefix, undefined);
  }

  /** Keys with `prefix` that sort after `startAfter` (S3 StartAfter: skips pages, not just rows). */
  async listAfter(prefix: string, startAfter: string | undefined): Promise<string[]> {
    const out: string[] = [];
    let token: string | undefined;
    do {
      this.stats.lists++;
      const res = await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: this.full(prefix),
          ...(token ? { ContinuationToken: token } : startAfter ? { StartAfter: this.full(startAfter) } : {}),
        }),
      );
      for (const o of res.Contents ?? []) if (o.Key) out.push(this.relative(o.Key));
      token = res.IsTruncated ? res.NextContinuationToken : undefined;
    } while (token);
    return out.sort();
  }
}

/** Fails early with a clear message when the bucket is missing or the credentials are refused. */
export async function checkBucket(store: S3ObjectStore): Promise<void> {
  try {
    await store.client.send(new ListObjectsV2Command({ Bucket: store.bucket, MaxKeys: 1 }));
  } catch (err) {
    throw new Error(`cannot use S3 bucket "${store.bucket}": ${describeS3Error(err)}`);
  }
}
