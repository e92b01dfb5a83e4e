import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { detectFormat, listInputFiles, openFileSource } from '../../connectors/file/index.js';
import type { SourceItem } from '../../src/pipeline/source.js';
import { zstdRawFrame } from './helpers/zstd-raw.js';

const dir = mkdtempSync(join(tmpdir(), 'rj-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const line = (id: string) => JSON.stringify({ id, problem: 'p', trace: 't' }) + '\n';

async function readAll(path: string, options = {}): Promise<SourceItem[]> {
  const src = await openFileSource(path, options);
  const out: SourceItem[] = [];
  for await (const item of src) out.push(item);
  return out;
}
const summary = (items: SourceItem[]) => items.map((i) => `${i.position.unit}#${i.position.offset}:${i.ok ? (i.raw as { id: string }).id : i.error}`);

describe('detectFormat', () => {
  it('knows the supported suffixes, case-insensitively', () => {
    expect(detectFormat('a.jsonl')).toEqual({ format: 'jsonl', compression: 'none' });
    expect(detectFormat('A.JSONL.GZ')).toEqual({ format: 'jsonl', compression: 'gzip' });
    expect(detectFormat('a.jsonl.zstd')).toEqual({ format: 'jsonl', compression: 'zstd' });
    expect(detectFormat('part-0.snappy.parquet')).toEqual({ format: 'parquet', compression: 'none' });
    expect(detectFormat('a.json')).toEqual({ format: 'json', compression: 'none' });
    expect(detectFormat('a.csv')).toBeUndefined();
    expect(detectFormat('a.gz')).toBeUndefined();
  });
});

describe('openFileSource on a folder', () => {
  const root = join(dir, 'tree');
  mkdirSync(join(root, 'b', 'nested'), { recursive: true });
  mkdirSync(join(root, '_temporary'), { recursive: true });
  mkdirSync(join(root, '.hidden'), { recursive: true });
  writeFileSync(join(root, 'b', 'nested', 'z.jsonl'), line('bz'));
  writeFileSync(join(root, 'b', '2.jsonl.gz'), gzipSync(line('b2a') + line('b2b')));
  writeFileSync(join(root, 'a.jsonl.zst'), zstdRawFrame(Buffer.from(line('a'))));
  writeFileSync(join(root, 'B.jsonl'), line('B')); // uppercase sorts before lowercase (code units)
  writeFileSync(join(root, '_SUCCESS'), '');
  writeFileSync(join(root, '_temporary', 'x.jsonl'), line('tmp'));
  writeFileSync(join(root, '.hidden', 'x.jsonl'), line('hidden'));
  writeFileSync(join(root, 'notes.txt'), 'ignored');
  writeFileSync(join(root, 'dataset_info.json'), '{"not":"data"}');
  symlinkSync(join(root, 'b', 'nested'), join(root, 'c-link'));

  it('reads supported files recursively in sorted order, skipping hidden/_ entries and .json', async () => {
    expect(summary(await readAll(root))).toEqual([
      'B.jsonl#0:B',
      'a.jsonl.zst#0:a',
      'b/2.jsonl.gz#0:b2a',
      'b/2.jsonl.gz#1:b2b',
      'b/nested/z.jsonl#0:bz',
      'c-link/z.jsonl#0:bz',
    ]);
  });

  it('reports sizes and progress', async () => {
    const files = await listInputFiles(root);
    const src = await openFileSource(root);
    const total = files.reduce((n, f) => n + f.bytes, 0);
    expect(await src.sizeHint()).toEqual({ totalBytes: total });
    for await (const _ of src) void _;
    expect(src.progress()).toEqual({ items: 6, bytesRead: total });
  });

  it('an empty folder yields nothing', async () => {
    mkdirSync(join(dir, 'empty'));
    expect(await readAll(join(dir, 'empty'))).toEqual([]);
  });

  it('close() before or after iteration is safe and stops reading', async () => {
    const src = await openFileSource(root);
    await src.close();
    await src.close();
    const again = await openFileSource(root);
    const it = again[Symbol.asyncIterator]();
    await it.next();
    await again.close();
    await again.close();
    expect((await it.next()).done).toBe(true);
  });
});

describe('openFileSource errors', () => {
  it('missing path', async () => {
    await expect(openFileSource(join(dir, 'nope.jsonl'))).rejects.toThrow(/^input path does not exist: .*nope\.jsonl$/);
  });
  it('unsupported extension', async () => {
    writeFileSync(join(dir, 'data.csv'), 'a,b\n');
    await expect(openFileSource(join(dir, 'data.csv'))).rejects.toThrow(/^unsupported file type: .*data\.csv \(expected one of \.jsonl, /);
  });
  it('a file deleted after listing becomes a dead letter, not a crash', async () => {
    writeFileSync(join(dir, 'gone.jsonl'), line('x'));
    const src = await openFileSource(join(dir, 'gone.jsonl'));
    rmSync(join(dir, 'gone.jsonl'));
    const items: SourceItem[] = [];
    for await (const i of src) items.push(i);
    expect(items).toEqual([expect.objectContaining({ ok: false, position: { source: 'file', unit: 'gone.jsonl', offset: 0 }, error: expect.stringMatching(/ENOENT/) })]);
  });
});

describe('.json files given explicitly', () => {
  it('a top-level array: one item per element, offset = index', async () => {
    writeFileSync(join(dir, 'arr.json'), '\uFEFF [\n {"id":"a","problem":"p","trace":"t"},\n 5,\n {"id":"b","problem":"p","trace":"t"}\n]');
    expect(summary(await readAll(join(dir, 'arr.json')))).toEqual(['arr.json#0:a', 'arr.json#1:not a JSON object (got number)', 'arr.json#2:b']);
  });
  it('a broken array is one dead letter', async () => {
    writeFileSync(join(dir, 'broken.json'), '[{"id":"a"},');
    const items = await readAll(join(dir, 'broken.json'));
    expect(items).toEqual([expect.objectContaining({ ok: false, error: expect.stringMatching(/^invalid JSON: /), rawText: '[{"id":"a"},' })]);
  });
  it('an array over the size limit is refused with advice', async () => {
    writeFileSync(join(dir, 'huge.json'), `[${'{"id":"a","problem":"p","trace":"t"},'.repeat(100)}{}]`);
    const items = await readAll(join(dir, 'huge.json'), { maxJsonArrayBytes: 1024 });
    expect(items).toEqual([expect.objectContaining({ ok: false, error: "JSON array file is 3.6 KB, over the 1 KB limit; convert it to JSONL (jq -c '.[]')" })]);
  });
  it('JSON Lines under a .json name are read as JSONL', async () => {
    writeFileSync(join(dir, 'lines.json'), line('x') + '\n' + line('y'));
    expect(summary(await readAll(join(dir, 'lines.json')))).toEqual(['lines.json#0:x', 'lines.json#2:y']);
  });
});
