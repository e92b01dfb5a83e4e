/**
 * `--out s3://bucket/prefix` as a store (the same table layout under the prefix).
 */
import type { ObjectStore } from '../../src/pipeline/storage/object-store.js';
import { createS3Client, parseS3Url } from './client.js';
import { checkBucket, S3ObjectStore } from './object-store.js';
import { S3Config, type S3ConfigInput } from '../../schemas/s3.js';

export interface OutputTarget {
  store: ObjectStore;
  /** absolute folder or s3:// URL, for messages */
  location: string;
}

export async function openS3Output(out: string, s3?: S3ConfigInput | S3Config): Promise<OutputTarget> {
  const cfg = S3Config.parse(s3 ?? {});
  const store = new S3ObjectStore(createS3Client(cfg), parseS3Url(out), {
    multipartThresholdBytes: cfg.multipart_threshold_mb * 1024 * 1024,
    partSizeBytes: cfg.part_size_mb * 1024 * 1024,
  });
  await checkBucket(store);
  return { store, location: out.replace(/\/+$/, '') };
}
