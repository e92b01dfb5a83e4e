import { describe, expect, it } from 'vitest';
import { LineSplitter, type Line } from '../../connectors/file/lines.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

function splitAll(input: Uint8Array, chunkSize: number, max = 1024, keep = 8): Line[] {
  const s = new LineSplitter(max, keep);
  const out: Line[] = [];
  for (let i = 0; i < input.length; i += chunkSize) out.push(...s.push(input.subarray(i, i + chunkSize)));
  const last = s.end();
  if (last) out.push(last);
  return out;
}

const show = (l: Line) => (l.tooLong ? `#${l.lineNo} TOO LONG ${l.tooLong.totalBytes} ${dec.decode(l.tooLong.head)}` : `#${l.lineNo} ${dec.decode(l.bytes)}`);

describe('LineSplitter', () => {
  it('gives the same lines for any chunking, counting physical lines and stripping CR', () => {
    const input = enc.encode('a\n\nbb\r\nccc\n  \nlast');
    const expected = ['#0 a', '#1 ', '#2 bb', '#3 ccc', '#4   ', '#5 last'];
    for (const size of [1, 2, 3, 5, 100]) expect(splitAll(input, size).map(show)).toEqual(expected);
  });

  it('does not emit an extra line for a trailing newline', () => {
    expect(splitAll(enc.encode('a\nb\n'), 3).map(show)).toEqual(['#0 a', '#1 b']);
    expect(splitAll(enc.encode(''), 3)).toEqual([]);
  });

  it('cuts over-long lines to a head and keeps counting', () => {
    const long = 'L'.repeat(50);
    const input = enc.encode(`ok\n${long}\nnext`);
    for (const size of [1, 7, 1000]) {
      expect(splitAll(input, size, 20, 8).map(show)).toEqual(['#0 ok', '#1 TOO LONG 50 LLLLLLLL', '#2 next']);
    }
  });

  it('exposes the unfinished line for a dead letter when the stream breaks', () => {
    const s = new LineSplitter(1024, 4);
    s.push(enc.encode('one\ntwo-partial'));
    expect(s.currentLineNo).toBe(1);
    expect(dec.decode(s.pendingHead())).toBe('two-partial');
    expect(s.pendingBytes).toBe(11);
  });
});
