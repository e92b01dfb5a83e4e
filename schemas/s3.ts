/**
 * The `s3:` section of the config. Credentials are never part of it: the AWS SDK's standard
 * chain finds them (environment, shared profile, web identity / IRSA, container or instance
 * role). Only where and how to talk to the server lives here.
 */
import { z } from 'zod';

export const S3Config = z
  .object({
    endpoint: z.url().optional().describe('Custom endpoint (MinIO, versitygw, Ceph...). Absent: `$S3_ENDPOINT`, else AWS\'s own.'),
    region: z.string().min(1).optional().describe('AWS region. Absent: `$AWS_REGION`, else `$AWS_DEFAULT_REGION`, else `us-east-1`.'),
    force_path_style: z.boolean().optional().describe('Path-style URLs (`http://host/bucket/key`). Absent: on when an endpoint is set.'),
    multipart_threshold_mb: z.number().positive().default(16).describe('Shard files at least this big go up as multipart uploads (invisible until complete).'),
    part_size_mb: z.number().min(5).default(8).describe('Part size of multipart uploads; S3 needs at least 5 MB for all but the last part.'),
    max_attempts: z.int().positive().default(5).describe('Attempts per request, retries included (SDK standard retry mode).'),
  })
  .strict()
  .describe('S3 input and output (docs/kafka-s3.md). Credentials come from the AWS SDK\'s standard chain, never from here. Operational: not part of config_hash.');
export type S3Config = z.infer<typeof S3Config>;
export type S3ConfigInput = z.input<typeof S3Config>;
