/** Small stdin/stdout helpers shared by the commands. */
import { UsageError } from '../api/usage.js';

export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

// The errors and the duration parser every entry point shares live with the library (src/api/usage.ts).
export { parseDurationFlag, RunStoppedError, UsageError } from '../api/usage.js';

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
