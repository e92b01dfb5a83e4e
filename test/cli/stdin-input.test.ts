/**
 * `run -i stdin://` (connectors/file/stdin.ts, the worked example of docs/extending.md): JSONL
 * piped into the real CLI becomes committed shards like a file's, a bad line a dead letter, and
 * the same lines piped again skip every committed range.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ManifestRange } from '../../schemas/outputs.js';
import { LocalObjectStore } from '../../src/pipeline/storage/object-store.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { runCli } from '../helpers/cli.js';
import { fastSimConfig, tempDir } from '../helpers/run-setup.js';

describe('run -i stdin://', () => {
  it('judges JSONL piped in, commits it as the stdin unit, and skips it all when the same lines come again', async () => {
    const dir = tempDir('stdin');
    const config = fastSimConfig(dir);
    const records = syntheticRecords(9, { seed: 11 });
    const lines = records.map((r) => JSON.stringify(r));
    lines.splice(4, 0, '{"record_id": "broken"'); // line 4: not JSON
    const stdin = `${lines.join('\n')}\n`;
    const out = join(dir, 'out');
    const args = ['run', '-c', config, '-i', 'stdin://', '-o', out, '--range-records', '4', '--progress', 'none'];

    const first = await runCli(args, { stdin });
    expect(first.code, first.stderr).toBe(0);
    const store = new LocalObjectStore(out);
    const verdicts = await readCommittedRows(store, 'verdicts');
    expect(verdicts.map((v) => v.record_id).sort()).toEqual(records.map((r) => r.id).sort());
    expect(new Set(verdicts.map((v) => v.source))).toEqual(new Set(['stdin']));
    const dead = await readCommittedRows(store, 'dead_letters');
    expect(dead).toHaveLength(1);
    expect(dead[0]).toMatchObject({ source: 'stdin', source_unit: 'stdin', source_offset: 4 });
    expect(String(dead[0]!.error)).toMatch(/invalid JSON/);
    // Ten lines in ranges of four: offsets 0-3, 4-7, 8-9, all in the one stdin unit.
    const ranges = readdirSync(join(out, '_commits'))
      .filter((f) => f.endsWith('.json'))
      .map((f) => (JSON.parse(readFileSync(join(out, '_commits', f), 'utf8')) as { range: ManifestRange }).range)
      .sort((a, b) => a.first_offset - b.first_offset);
    expect(ranges.map((r) => [r.unit, r.first_offset, r.last_offset])).toEqual([
      ['stdin', 0, 3],
      ['stdin', 4, 7],
      ['stdin', 8, 9],
    ]);
    expect(first.stdout).toMatch(/^ {2}judged\s+9$/m);
    expect(first.stdout).toMatch(/^ {2}dead letters\s+1$/m);

    const again = await runCli(args, { stdin });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/already committed \(skipped\)\s+10$/m);
    expect(again.stdout).toMatch(/^ {2}judged\s+0$/m);
    expect(await readCommittedRows(store, 'verdicts')).toHaveLength(9);
  });
});
