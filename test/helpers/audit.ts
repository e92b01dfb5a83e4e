import { existsSync, readFileSync } from 'node:fs';

/**
 * Successful model calls per record id in an audit log (one JSONL line per HTTP attempt): with
 * a one-juror jury, each judging of a record is one such call, so a count above 1 means the
 * record was judged, and paid for, more than once.
 */
export function okCallsPerRecord(auditPath: string): Map<string, number> {
  const counts = new Map<string, number>();
  if (!existsSync(auditPath)) return counts;
  const text = readFileSync(auditPath, 'utf8');
  // Read while the run writes: a last line without its newline is still being written.
  for (const line of text.slice(0, text.lastIndexOf('\n') + 1).split('\n')) {
    if (!line.trim()) continue;
    const e = JSON.parse(line) as { record_id: string; outcome: string };
    // The run's preflight (one call per endpoint and model before any input) judges no record.
    if (e.record_id === '(preflight)') continue;
    if (e.outcome === 'ok') counts.set(e.record_id, (counts.get(e.record_id) ?? 0) + 1);
  }
  return counts;
}
