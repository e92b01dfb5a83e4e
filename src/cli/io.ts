/** Small stdin/stdout helpers shared by the commands. */

export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** A user-facing failure: printed as one line on stderr, exit code 2, no stack trace. */
export class UsageError extends Error {}

/**
 * A failure after the work started whose message already says what failed and what to do
 * (a storage outage that outlasted --max-storage-outage): one line on stderr, exit code 1.
 */
export class FatalError extends Error {}

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
