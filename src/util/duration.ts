/**
 * Durations on the command line: "90s", "10m", "1h", "500ms", or a plain number of seconds.
 * Returns milliseconds, or null when the text is not one.
 */
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

export function parseDuration(text: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(text);
  if (!m) return null;
  const ms = Number(m[1]) * UNIT_MS[m[2] ?? 's']!;
  return Number.isFinite(ms) ? Math.round(ms) : null;
}
