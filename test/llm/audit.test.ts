import { mkdtemp, readdir, readFile, readlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAuditLog, type AuditEntry } from '../../src/llm/audit.js';
import { createRedactor } from '../../src/util/redact.js';

function entry(i: number, content: string): AuditEntry {
  return {
    ts: new Date(0).toISOString(), caller: 'test', phase: 'phase1', participant: `j${i}`, record_id: 'r', model: 'm', endpoint: 'e', kind: 'text',
    prompt_hash: 'h', messages: [{ role: 'user', content }], response: content, reasoning: null, usage: null, latency_ms: 1, attempt: i, outcome: 'ok', error: null,
  };
}

describe('audit log', () => {
  it('appends one parseable line per entry, in order, through the redactor', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rj-audit-'));
    const path = join(dir, 'nested', 'audit.jsonl');
    const log = createAuditLog(path, createRedactor({ X_API_KEY: 'sk-sentinel-audit-777' }));
    const big = 'y'.repeat(200_000);
    await Promise.all([log.write(entry(1, 'uses sk-sentinel-audit-777')), log.write(entry(2, big)), log.write(entry(3, 'plain'))]);
    await log.close();
    const text = await readFile(path, 'utf8');
    expect(text).not.toContain('sk-sentinel-audit-777');
    const lines = text.trimEnd().split('\n').map((l) => JSON.parse(l) as AuditEntry);
    expect(lines.map((l) => l.attempt)).toEqual([1, 2, 3]);
    expect(lines[0]!.messages[0]!.content).toBe('uses [REDACTED]');
    expect(lines[1]!.response).toBe(big);

    const again = createAuditLog(path, createRedactor({}));
    await again.write(entry(4, 'more'));
    await again.close();
    expect((await readFile(path, 'utf8')).trimEnd().split('\n')).toHaveLength(4); // appended, not truncated
  });

  it('a line written after close() (a call aborted by Gateway.close) reaches the file and leaves no handle open', async () => {
    // Node 26 fails the process when a FileHandle is left to the garbage collector.
    const openOn = async (path: string) => (await Promise.all((await readdir('/proc/self/fd')).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')))).filter((p) => p === path).length;
    const dir = await mkdtemp(join(tmpdir(), 'rj-audit-'));
    const path = join(dir, 'audit.jsonl');
    const log = createAuditLog(path, createRedactor({}));
    const first = log.write(entry(1, 'before'));
    const closing = log.close();
    const late = log.write(entry(2, 'during close'));
    await Promise.all([first, closing, late]);
    await log.write(entry(3, 'after close'));
    expect(await openOn(path)).toBe(0);
    expect((await readFile(path, 'utf8')).trimEnd().split('\n').map((l) => (JSON.parse(l) as AuditEntry).attempt)).toEqual([1, 2, 3]);
    await log.close();
  });

  it('surfaces a write failure on close', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rj-audit-'));
    const log = createAuditLog(dir, createRedactor({})); // a directory cannot be opened for append
    await log.write(entry(1, 'x'));
    await expect(log.close()).rejects.toThrow(/audit log/);
  });
});
