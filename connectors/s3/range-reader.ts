/**
 * An hyparquet AsyncBuffer over one S3 object: every slice is a ranged GET, so reading a
 * Parquet file costs its footer plus the column chunks of the row groups actually read.
 * Reads carry If-Match with the listed ETag: an object replaced mid-read fails loudly (412)
 * instead of mixing bytes of two versions.
 */
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { AsyncBuffer } from 'hyparquet';
import { describeS3Error, httpStatus } from './client.js';

export interface S3ObjectRef {
  bucket: string;
  key: string;
  size: number;
  etag?: string;
}

export class S3RangeReader implements AsyncBuffer {
  readonly byteLength: number;
  /** bytes and requests fetched so far (progress, tests) */
  bytesRead = 0;
  requests = 0;

  constructor(
    private readonly client: S3Client,
    private readonly ref: S3ObjectRef,
  ) {
    this.byteLength = ref.size;
  }

  async slice(start: number, end?: number): Promise<ArrayBuffer> {
    const stop = Math.min(end ?? this.byteLength, this.byteLength);
    if (stop <= start) return new ArrayBuffer(0);
    this.requests++;
    let bytes: Uint8Array;
    try {
      const res = await this.client.send(
        new GetObjectCommand({
          Bucket: this.ref.bucket,
          Key: this.ref.key,
          Range: `bytes=${start}-${stop - 1}`,
          ...(this.ref.etag ? { IfMatch: this.ref.etag } : {}),
        }),
      );
      bytes = res.Body ? await res.Body.transformToByteArray() : new Uint8Array(0);
    } catch (err) {
      if (httpStatus(err) === 412) throw new Error(`s3://${this.ref.bucket}/${this.ref.key} changed while being read (ETag is no longer ${this.ref.etag})`);
      throw new Error(`ranged read of s3://${this.ref.bucket}/${this.ref.key} failed: ${describeS3Error(err)}`);
    }
    if (bytes.byteLength !== stop - start) {
      throw new Error(`ranged read of s3://${this.ref.bucket}/${this.ref.key} returned ${bytes.byteLength} bytes, expected ${stop - start}`);
    }
    this.bytesRead += bytes.byteLength;
    // A fresh buffer of exactly this slice (the SDK's may be a view into a larger one).
    return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? (bytes.buffer as ArrayBuffer) : (bytes.slice().buffer as ArrayBuffer);
  }
}
