/**
 * An S3 server of a test's own (versitygw through infra/s3.sh, on a free port, with its own
 * state folder), so an outage test can stop and restart it without touching the shared server
 * other tests and engineers use. The data folder survives a restart (INFRA_KEEP_DATA=1).
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';

export function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.once('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => res(port));
    });
  });
}

/**
 * A versitygw binary already built by infra/s3.sh: this checkout's .infra, else the main
 * checkout's when this is a git worktree (they share one common git dir). None: s3.sh builds one.
 */
function builtBinary(): string | undefined {
  const candidates = [join(process.cwd(), '.infra', 'bin', 'versitygw')];
  try {
    const common = execFileSync('git', ['rev-parse', '--git-common-dir'], { encoding: 'utf8' }).trim();
    candidates.push(join(dirname(resolve(common)), '.infra', 'bin', 'versitygw'));
  } catch {
    // not a git checkout: only this folder's .infra
  }
  return candidates.find((p) => existsSync(p) && existsSync(`${p}.version`));
}

export interface PrivateS3 {
  endpoint: string;
  client: S3Client;
  start(): void;
  stop(): void;
}

export async function privateS3(stateDir: string): Promise<PrivateS3> {
  const port = await freePort();
  const bin = builtBinary();
  if (bin) {
    mkdirSync(join(stateDir, 'bin'), { recursive: true });
    symlinkSync(bin, join(stateDir, 'bin', 'versitygw'));
    copyFileSync(`${bin}.version`, join(stateDir, 'bin', 'versitygw.version'));
  }
  const env = {
    ...process.env,
    INFRA_STATE: stateDir,
    INFRA_KEEP_DATA: '1',
    S3_PORT: String(port),
    S3_ACCESS_KEY: process.env.AWS_ACCESS_KEY_ID ?? 'rjtest',
    S3_SECRET_KEY: process.env.AWS_SECRET_ACCESS_KEY ?? 'rjtestsecret',
    S3_REGION: process.env.AWS_REGION ?? 'us-east-1',
  };
  const script = (cmd: 'start' | 'stop') => execFileSync('bash', ['infra/s3.sh', cmd], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 600_000 });
  const endpoint = `http://127.0.0.1:${port}`;
  script('start');
  return {
    endpoint,
    client: new S3Client({ endpoint, region: env.S3_REGION, forcePathStyle: true, credentials: { accessKeyId: env.S3_ACCESS_KEY, secretAccessKey: env.S3_SECRET_KEY } }),
    start: () => void script('start'),
    stop: () => void script('stop'),
  };
}
