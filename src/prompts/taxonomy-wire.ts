/**
 * The framed blocks taxonomy prompts carry, in the prompt layer so the taxonomy's prompt
 * builders and the simulator read one definition. Blocks are one JSON object per line so a
 * model (or the simulator) can read them line by line.
 */

export const TAXONOMY_BLOCK = {
  leaves: 'TAXONOMY LEAVES',
  defects: 'DEFECTS TO LABEL',
  current: 'CURRENT TAXONOMY',
  batch: 'NEW DEFECTS',
  draft: 'DRAFT TAXONOMY',
} as const;

/** Parses a block of JSON lines; lines that are not objects are skipped. */
export function parseJsonLines(block: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of block.split('\n')) {
    if (!line.trim()) continue;
    try {
      const v: unknown = JSON.parse(line);
      if (v && typeof v === 'object' && !Array.isArray(v)) out.push(v as Record<string, unknown>);
    } catch {
      // not ours: ignore
    }
  }
  return out;
}
