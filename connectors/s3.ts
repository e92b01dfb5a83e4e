/**
 * Entry of the S3 connector: `s3://bucket/prefix` as the input (Parquet objects, shared among
 * --world-size workers) and as the output. Everything under connectors/s3/ (and the AWS SDK)
 * loads only when a run opens one.
 */
import { registerInput, registerOutput } from '../src/pipeline/connector.js';

registerInput({
  scheme: 's3',
  help: 's3://bucket/prefix (Parquet objects)',
  place: 'bucket',
  resumesFromGroup: false,
  async open(url, ctx) {
    const [{ createS3Client }, { openS3ParquetSource }] = await Promise.all([import('./s3/client.js'), import('./s3/parquet-source.js')]);
    const source = await openS3ParquetSource(createS3Client(ctx.config.s3), url, { rank: ctx.rank, worldSize: ctx.worldSize, committed: ctx.committed });
    return { source, sinks: [], sequentialUnits: true, resumesFromGroup: false, close: () => source.close() };
  },
});

registerOutput({
  scheme: 's3',
  location: (url) => url.replace(/\/+$/, ''),
  async open(url, config) {
    return (await import('./s3/output.js')).openS3Output(url, config.s3);
  },
});
