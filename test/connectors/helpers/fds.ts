/** Checks that sources release their file descriptors (Linux /proc; a no-op elsewhere). */
import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import { expect } from 'vitest';

export const HAS_PROC = existsSync('/proc/self/fd');

/** Open descriptors of this process pointing at `file` (Linux /proc); 0 elsewhere. */
export function fdsOpenOn(file: string): number {
  let n = 0;
  try {
    for (const fd of readdirSync('/proc/self/fd')) {
      try {
        if (readlinkSync(`/proc/self/fd/${fd}`) === file) n++;
      } catch {
        // fd closed while listing
      }
    }
  } catch {
    return 0;
  }
  return n;
}

/** Streams close their fd asynchronously after destroy(); give them a moment. */
export async function expectNoFdOn(file: string): Promise<void> {
  for (let i = 0; i < 50 && fdsOpenOn(file) > 0; i++) await new Promise((r) => setTimeout(r, 10));
  expect(fdsOpenOn(file)).toBe(0);
}
