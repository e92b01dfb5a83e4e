// The output disk fills up mid-run (a tiny tmpfs): the run waits --max-storage-outage, then
// stops with one line naming the path and the range, exit 1; only complete ranges are visible;
// with space freed the same command finishes the rest without judging committed ranges again.
// Needs `mount -t tmpfs` (root); skipped with the reason otherwise.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalObjectStore } from '../../src/pipeline/storage/object-store.js';
import { listCommitted, verifyCommitted } from '../../src/pipeline/commit/shard-commit.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { okCallsPerRecord } from '../helpers/audit.js';
import { runCli } from '../helpers/cli.js';
import { LONG_TEST_MS, treeProbe } from '../helpers/progress.js';
import { fastSimConfig, tempDir, writeJsonl } from '../helpers/run-setup.js';

const dir = tempDir('disk-full');
const mnt = join(dir, 'mnt');
mkdirSync(mnt);

/** Mounts a tmpfs of `size` at mnt; the reason it could not, else null. */
function mountTmpfs(size: string): string | null {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', mnt], { stdio: 'pipe' });
    return null;
  } catch (e) {
    return String((e as { stderr?: Buffer }).stderr ?? e).trim() || 'mount failed';
  }
}

// ~200 KB holds a few ranges of 20 records (about 25 KB each) and not the 300 records' 15.
const refused = mountTmpfs('200k');
if (refused) console.warn(`[disk-full] skipped: cannot mount a tmpfs here (${refused}); run as root to test a full disk`);

const singleJuror = { mode: 'single', jurors: [{ id: 'jury-0', endpoint: 'sim', model: 'sim-juror-a' }] };

describe.skipIf(refused !== null)('output disk full', () => {
  afterAll(() => {
    execFileSync('umount', ['-l', mnt], { stdio: 'ignore' });
  });

  it('one clear line naming the path, exit 1, only complete ranges visible; resumes without re-judging', async () => {
    const records = syntheticRecords(300, { seed: 43, prefix: 'full' });
    const input = writeJsonl(join(dir, 'in.jsonl'), records);
    const audit = join(dir, 'audit.jsonl');
    const out = join(mnt, 'out');
    const args = ['run', '--config', fastSimConfig(dir, singleJuror), '--input', input, '--out', out, '--range-records', '20', '--concurrency', '4', '--progress', 'none', '--audit-log', audit, '--max-storage-outage', '2s'];

    const first = await runCli(args, { progress: treeProbe(out) });
    expect(first.code, first.stderr).toBe(1);
    const lines = first.stderr.split('\n').filter((l) => l.trim());
    expect(first.stderr).not.toContain('Error:');
    expect(lines.filter((l) => /^\s+at /.test(l))).toEqual([]); // no stack
    const final = lines.filter((l) => l.includes('giving up'));
    expect(final).toHaveLength(1);
    expect(final[0]).toMatch(new RegExp(`^reasoning-jury: storage unavailable for \\ds, giving up: could not write ${out.replace(/[.+]/g, '\\$&')}/\\S+ \\(range \\S+\\.\\.\\S+\\): ENOSPC: no space left on device`));
    expect(final[0]).toContain(`once ${out} has free space`);
    expect(lines.some((l) => l.includes('storage unavailable: could not write') && l.includes('holding intake'))).toBe(true);

    const store = new LocalObjectStore(out);
    const manifests = await listCommitted(store);
    expect(manifests.length).toBeGreaterThan(0);
    expect(manifests.length).toBeLessThan(15);
    for (const m of manifests) expect(await verifyCommitted(store, m)).toEqual([]);
    const committedFirst = new Set((await readCommittedRows(store, 'verdicts')).map((r) => String(r.record_id)));
    const judgedFirst = okCallsPerRecord(audit);
    for (const id of committedFirst) expect(judgedFirst.get(id)).toBe(1);

    // Free space: the same command finishes the rest.
    execFileSync('mount', ['-o', 'remount,size=16m', mnt]);
    const second = await runCli(args, { progress: treeProbe(out) });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(new RegExp(`already committed \\(skipped\\)\\s+${committedFirst.size}\\b`));
    const ids = (await readCommittedRows(store, 'verdicts')).map((r) => String(r.record_id));
    expect(ids.length).toBe(records.length);
    expect(new Set(ids)).toEqual(new Set(records.map((r) => r.id)));
    for (const m of await listCommitted(store)) expect(await verifyCommitted(store, m)).toEqual([]);
    // Committed ranges were not judged again; only what the first run had not committed was.
    const judged = okCallsPerRecord(audit);
    for (const id of committedFirst) expect(judged.get(id)).toBe(1);
    const secondCalls = [...judged.values()].reduce((a, b) => a + b, 0) - [...judgedFirst.values()].reduce((a, b) => a + b, 0);
    expect(secondCalls).toBe(records.length - committedFirst.size);
  }, LONG_TEST_MS);
});
