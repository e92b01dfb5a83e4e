import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { openFileSource } from '../../connectors/file/index.js';
import type { SourceItem } from '../../src/pipeline/source.js';
import { mapSourceItem } from '../../src/pipeline/record-mapping.js';
import { expectNoFdOn, fdsOpenOn, HAS_PROC } from './helpers/fds.js';
import { findPython, IS_CI, runPython, skipMessage } from './helpers/python.js';
import { zstdRawFrame } from './helpers/zstd-raw.js';

const dir = mkdtempSync(join(tmpdir(), 'rj-jsonl-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const enc = new TextEncoder();
const concatBytes = (...parts: Uint8Array[]) => Buffer.concat(parts.map((p) => Buffer.from(p.buffer, p.byteOffset, p.length)));

async function readAll(path: string, options = {}): Promise<SourceItem[]> {
  const src = await openFileSource(path, options);
  const out: SourceItem[] = [];
  for await (const item of src) out.push(item);
  return out;
}

function records(n: number) {
  return Array.from({ length: n }, (_, i) => ({
    id: `r${i}`,
    problem: `What is ${i} + ${i}? ünïcödé ✓`,
    steps: [`${i} + ${i}`, `= ${2 * i}`],
    final_solution: String(2 * i),
    meta: { i },
  }));
}
const jsonl = (rows: unknown[]) => enc.encode(rows.map((r) => JSON.stringify(r)).join('\n') + '\n');

function expectRoundTrip(items: SourceItem[], rows: ReturnType<typeof records>, unit: string) {
  expect(items.every((i) => i.ok)).toBe(true);
  expect(items.map((i) => i.position)).toEqual(rows.map((_, offset) => ({ source: 'file', unit, offset })));
  const mapped = items.map((i) => mapSourceItem(i));
  expect(mapped.map((m) => (m.ok ? m.record : m.error))).toEqual(rows);
}

describe('JSONL round trips', () => {
  const rows = records(3000); // > several 64 KB read chunks
  const data = jsonl(rows);

  it('plain', async () => {
    writeFileSync(join(dir, 'plain.jsonl'), data);
    expectRoundTrip(await readAll(join(dir, 'plain.jsonl')), rows, 'plain.jsonl');
  });

  it('gzip, including multi-member files (concatenated .gz)', async () => {
    writeFileSync(join(dir, 'a.jsonl.gz'), gzipSync(data));
    expectRoundTrip(await readAll(join(dir, 'a.jsonl.gz')), rows, 'a.jsonl.gz');
    const half = data.indexOf(0x0a, data.length >> 1) + 1;
    writeFileSync(join(dir, 'multi.jsonl.gz'), concatBytes(gzipSync(data.subarray(0, half)), gzipSync(data.subarray(half))));
    expectRoundTrip(await readAll(join(dir, 'multi.jsonl.gz')), rows, 'multi.jsonl.gz');
  });

  it('zstd frames (raw blocks, several frames) under .zst and .zstd', async () => {
    const cut = 100_001; // frames split mid-line: lines must survive frame boundaries
    writeFileSync(join(dir, 'a.jsonl.zst'), concatBytes(zstdRawFrame(data.subarray(0, cut), 50_000), zstdRawFrame(data.subarray(cut))));
    expectRoundTrip(await readAll(join(dir, 'a.jsonl.zst')), rows, 'a.jsonl.zst');
    writeFileSync(join(dir, 'b.jsonl.zstd'), zstdRawFrame(data));
    expectRoundTrip(await readAll(join(dir, 'b.jsonl.zstd')), rows, 'b.jsonl.zstd');
  });

  it('real zstd compression (written by Python), multi-frame', async (ctx) => {
    const py = await findPython();
    if (!py.python) {
      if (IS_CI) throw new Error(py.reason);
      console.warn(skipMessage('real-zstd JSONL test', py.reason));
      ctx.skip();
      return;
    }
    const src = join(dir, 'src.jsonl');
    writeFileSync(src, data);
    const script = join(dir, 'zst.py');
    writeFileSync(
      script,
      [
        'import sys, pyarrow as pa',
        'data = open(sys.argv[1], "rb").read()',
        'half = data.index(b"\\n", len(data) // 2) + 1',
        'out = pa.compress(data[:half], codec="zstd", asbytes=True) + pa.compress(data[half:], codec="zstd", asbytes=True)',
        'open(sys.argv[2], "wb").write(out)',
      ].join('\n'),
    );
    await runPython(py.python, script, [src, join(dir, 'real.jsonl.zst')]);
    expectRoundTrip(await readAll(join(dir, 'real.jsonl.zst')), rows, 'real.jsonl.zst');
  });
});

describe('malformed input becomes dead letters, never a crash', () => {
  const tenMBTrace = JSON.stringify({ id: 'big', problem: 'p', trace: 'x'.repeat(10 * 1024 * 1024) });
  const lines: (string | Uint8Array)[] = [
    JSON.stringify({ id: 1, problem: 'p', trace: 't' }), // 0 ok
    '', // 1 blank: skipped, still counted
    '{"id": 2, "problem": ', // 2 broken JSON
    concatBytes(enc.encode('{"id":"3","problem":"p'), Uint8Array.of(0xff, 0xfe), enc.encode('","trace":"t"}')), // 3 bad UTF-8
    '[1,2,3]', // 4 not an object
    JSON.stringify({ id: 4, problem: 5, trace: 't' }), // 5 wrong type
    JSON.stringify({ problem: 'p', trace: 't' }), // 6 missing id
    JSON.stringify({ id: '7', problem: 'p', trace: '  ' }), // 7 empty trace
    JSON.stringify({ id: '8', problem: 'p', steps: ['a', 3] }), // 8 non-string step
    tenMBTrace, // 9 over the 8 MB trace limit (but under the 16 MB line limit)
    JSON.stringify({ id: '10', problem: 'p', steps: ['a'] }) + '\r', // 10 ok, CRLF
    '   ', // 11 whitespace only: skipped
    JSON.stringify({ id: '12', problem: 'p', trace: 't' }), // 12 ok, no final newline
  ];
  const bytes = concatBytes(...lines.flatMap((l, i) => [typeof l === 'string' ? enc.encode(l) : l, enc.encode(i < lines.length - 1 ? '\n' : '')]));

  it.each([
    ['bad.jsonl', (b: Uint8Array) => b],
    ['bad.jsonl.gz', (b: Uint8Array) => gzipSync(b)],
    ['bad.jsonl.zst', (b: Uint8Array) => zstdRawFrame(b)],
  ])('%s', async (name, pack) => {
    writeFileSync(join(dir, name), pack(bytes));
    const items = await readAll(join(dir, name));
    const mapped = items.map((i) => mapSourceItem(i));
    const byOffset = new Map(mapped.map((m) => [m.position.offset, m]));
    const reason = (offset: number) => {
      const m = byOffset.get(offset);
      return m && !m.ok ? m.error : 'ok';
    };
    // count in = ok + dead: every non-blank physical line is exactly one item.
    expect([...byOffset.keys()]).toEqual([0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12]);
    expect(mapped.filter((m) => m.ok).length + mapped.filter((m) => !m.ok).length).toBe(11);
    expect(reason(0)).toBe('ok');
    expect(reason(2)).toMatch(/^invalid JSON: /);
    expect(reason(3)).toBe('invalid UTF-8');
    expect(reason(4)).toBe('not a JSON object (got array)');
    expect(reason(5)).toBe('problem: expected string, received number');
    expect(reason(6)).toBe("id: missing (no value at 'id')");
    expect(reason(7)).toBe('trace: record has neither a non-empty trace nor non-empty steps');
    expect(reason(8)).toBe('steps[1]: expected string, received number');
    expect(reason(9)).toBe('trace is 10.0 MB, over the 8 MB limit');
    expect(reason(10)).toBe('ok');
    expect(reason(12)).toBe('ok');
    const utf8 = byOffset.get(3)!;
    expect(!utf8.ok && utf8.rawText).toBe('{"id":"3","problem":"p\uFFFD\uFFFD","trace":"t"}');
    const big = byOffset.get(9)!;
    expect(!big.ok && big.rawTextTruncated).toBe(true);
    expect(!big.ok && big.rawText.length).toBe(64 * 1024);
  });

  it('over-long lines are cut, not buffered, and reading continues (default 16 MB limit)', async () => {
    const huge = 'z'.repeat(17 * 1024 * 1024);
    writeFileSync(join(dir, 'long.jsonl'), `${JSON.stringify({ id: 'a', problem: 'p', trace: 't' })}\n"${huge}"\n{"id":"b","problem":"p","trace":"t"}\n`);
    const items = await readAll(join(dir, 'long.jsonl'));
    expect(items.map((i) => [i.position.offset, i.ok ? 'ok' : i.error])).toEqual([
      [0, 'ok'],
      [1, 'line is 17.0 MB, over the 16 MB line limit'],
      [2, 'ok'],
    ]);
    const dead = items[1]!;
    expect(!dead.ok && dead.rawTextTruncated && dead.rawText.length).toBe(64 * 1024);
  });

  it('a configurable line limit', async () => {
    writeFileSync(join(dir, 'limit.jsonl'), `{"id":"a","problem":"${'p'.repeat(3000)}","trace":"t"}\n`);
    const [item] = await readAll(join(dir, 'limit.jsonl'), { maxLineBytes: 1024, maxRawTextBytes: 100 });
    expect(item).toMatchObject({ ok: false, error: 'line is 3.0 KB, over the 1 KB line limit', rawTextTruncated: true });
    expect(!item!.ok && item!.rawText.length).toBe(100);
  });

  it('a truncated .gz keeps the lines before the damage and ends with one dead letter', async () => {
    const data = jsonl(records(2000));
    const gz = gzipSync(data);
    writeFileSync(join(dir, 'cut.jsonl.gz'), gz.subarray(0, gz.length - 30));
    const items = await readAll(join(dir, 'cut.jsonl.gz'));
    const last = items.at(-1)!;
    expect(items.slice(0, -1).every((i) => i.ok)).toBe(true);
    expect(last.ok).toBe(false);
    expect(!last.ok && last.error).toMatch(/^read failed at line \d+: gzip: unexpected end of file/);
    expect(last.position.offset).toBe(items.length - 1);
  });

  it('a truncated or corrupt .zst ends with one dead letter', async () => {
    const frame = zstdRawFrame(jsonl(records(100)));
    writeFileSync(join(dir, 'cut.jsonl.zst'), frame.subarray(0, frame.length - 10));
    const items = await readAll(join(dir, 'cut.jsonl.zst'));
    expect(items.at(-1)).toMatchObject({ ok: false, error: expect.stringMatching(/zstd: unexpected end of file/) });
    writeFileSync(join(dir, 'junk.jsonl.zst'), enc.encode('this is not zstd at all, just text\n'));
    const junk = await readAll(join(dir, 'junk.jsonl.zst'));
    expect(junk).toEqual([
      expect.objectContaining({ ok: false, position: { source: 'file', unit: 'junk.jsonl.zst', offset: 0 }, error: expect.stringMatching(/^read failed at line 0: zstd: /) }),
    ]);
  });
});

describe('laziness and resource release', () => {
  const rows = records(200_000);
  const data = jsonl(rows);

  it.each([
    ['lazy.jsonl', (b: Uint8Array) => b],
    ['lazy.jsonl.gz', (b: Uint8Array) => gzipSync(b)],
    ['lazy.jsonl.zst', (b: Uint8Array) => zstdRawFrame(b)],
  ])('pulling 10 items from a 200k-line %s reads only a few chunks', async (name, pack) => {
    const file = join(dir, name);
    const packed = pack(data);
    writeFileSync(file, packed);
    const src = await openFileSource(file);
    const it = src[Symbol.asyncIterator]();
    for (let i = 0; i < 10; i++) expect((await it.next()).value).toMatchObject({ ok: true, position: { offset: i } });
    if (HAS_PROC) expect(fdsOpenOn(file)).toBe(1);
    const { bytesRead, items } = src.progress();
    expect(items).toBe(10);
    expect(bytesRead).toBeGreaterThan(0);
    expect(bytesRead).toBeLessThanOrEqual(4 * 64 * 1024); // file is several MB
    expect(packed.length).toBeGreaterThan(20 * bytesRead);
    expect(await src.sizeHint()).toEqual({ totalBytes: packed.length });
    await src.close();
    expect((await it.next()).done).toBe(true);
    await expectNoFdOn(file);
  });

  it('a source iterates once', async () => {
    writeFileSync(join(dir, 'once.jsonl'), jsonl(records(3)));
    const src = await openFileSource(join(dir, 'once.jsonl'));
    src[Symbol.asyncIterator]();
    expect(() => src[Symbol.asyncIterator]()).toThrow(/only once/);
    await src.close();
  });
});
