/** Small stdin/stdout helpers shared by the commands. */
import { parseDuration } from '../util/duration.js';
import { ReasoningJuryError } from '../util/errors.js';

export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** A user-facing failure: printed as one line on stderr, exit code 2, no stack trace. */
export class UsageError extends ReasoningJuryError {
  override get kind() {
    return 'usage' as const;
  }
}

/** A run that stopped for a reason outside it (an endpoint down too long): one line, exit 3 (README, "Endpoint outages"). */
export class RunStoppedError extends ReasoningJuryError {
  override get kind() {
    return 'endpoint' as const;
  }
}

/** A duration flag ("90s", "15m", "2h", "500ms"; a bare number is seconds), at least 1 ms. */
export function parseDurationFlag(text: string, flag: string): number {
  const ms = parseDuration(text);
  if (ms === null || !(ms >= 1)) throw new UsageError(`${flag} must be a duration such as 90s, 30m or 2h (got "${text}")`);
  return ms;
}

export function parseJsonInput(text: string, what: string): unknown {
  if (text.trim() === '') throw new UsageError(`expected ${what} as JSON on stdin, got nothing`);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${what} on stdin is not valid JSON: ${(err as Error).message}`);
  }
}

export function writeJson(value: unknown, pretty: boolean): void {
  process.stdout.write(`${JSON.stringify(value, null, pretty ? 2 : undefined)}\n`);
}
