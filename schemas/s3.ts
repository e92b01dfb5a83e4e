/**
 * The `s3:` section of the config. Credentials are never part of it: the AWS SDK's standard
 * chain finds them (environment, shared profile, web identity / IRSA, container or instance
 * role). Only where and how to talk to the server lives here.
 */
import { z } from 'zod';

export const S3Config = z
  .object({
    /** Custom endpoint (MinIO, versitygw, Ceph...). Default: $S3_ENDPOINT, else AWS's own. */
    endpoint: z.url().optional(),
    /** Default: $AWS_REGION / the shared config, else us-east-1. */
    region: z.string().min(1).optional(),
    /** Path-style URLs (http://host/bucket/key). Default: on when an endpoint is set. */
    force_path_style: z.boolean().optional(),
    /** Shard files at least this big go up as multipart uploads (invisible until complete). */
    multipart_threshold_mb: z.number().positive().default(16),
    /** Part size of multipart uploads; S3 needs at least 5 MB for all but the last part. */
    part_size_mb: z.number().min(5).default(8),
    /** Attempts per request, retries included (SDK standard retry mode). */
    max_attempts: z.int().positive().default(5),
  })
  .strict();
export type S3Config = z.infer<typeof S3Config>;
export type S3ConfigInput = z.input<typeof S3Config>;
