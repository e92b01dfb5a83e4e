import { execFileSync } from 'node:child_process';

/** CLI tests spawn the built bin; build once per run unless the caller already did. */
export default function setup(): void {
  if (process.env.RJ_SKIP_BUILD === '1') return;
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json'], { stdio: 'inherit' });
}
