import { describe, expect, it } from 'vitest';
import { segmentRecord, segmentText, SegmentationError } from '../src/segment/index.js';

describe('segmentText (paper regex: end-of-sentence char + blank line)', () => {
  it('splits only where a sentence ends before the blank line', () => {
    const t = 'First we compute x.\n\nThen y = 2x, so\n\ny = 4.\n\nIs that right?\n\n\nYes!';
    expect(segmentText(t, 'regex')).toEqual(['First we compute x.', 'Then y = 2x, so\n\ny = 4.', 'Is that right?', 'Yes!']);
  });

  it('keeps a code block with blank lines inside one step', () => {
    const t = 'Write the loop:\n\nfor i in range(3):\n\n    print(i)\n\nDone.';
    expect(segmentText(t, 'regex')).toEqual([t]);
    expect(segmentText(t, 'blank_line')).toHaveLength(4);
  });

  it('tolerates spaces on the blank line and CRLF line ends', () => {
    expect(segmentText('A.\r\n  \r\nB.', 'regex')).toEqual(['A.', 'B.']);
    expect(segmentText('A. \n \t\n B.', 'regex')).toEqual(['A.', 'B.']);
  });

  it('does not split on a single newline', () => {
    expect(segmentText('A.\nB.', 'regex')).toEqual(['A.\nB.']);
  });
});

describe('segmentRecord', () => {
  it('numbers steps from 1', () => {
    expect(segmentRecord({ trace: 'A.\n\nB.' })).toEqual([
      { index: 1, text: 'A.' },
      { index: 2, text: 'B.' },
    ]);
  });

  it('passes given steps through unchanged, even empty ones, and never re-segments them', () => {
    const steps = ['x = 1.\n\ny = 2.', '', 'done'];
    const out = segmentRecord({ trace: 'ignored.\n\nignored.', steps });
    expect(out.map((s) => s.text)).toEqual(steps);
    expect(out.map((s) => s.index)).toEqual([1, 2, 3]);
  });

  it('segments the trace when asked to even if steps exist', () => {
    expect(segmentRecord({ trace: 'A.\n\nB.', steps: ['one'] }, 'regex')).toHaveLength(2);
  });

  it('explains what is missing', () => {
    expect(() => segmentRecord({ trace: '   ' })).toThrow(SegmentationError);
    expect(() => segmentRecord({ trace: 'x' }, 'given')).toThrow(/no steps/);
    expect(() => segmentRecord({})).toThrow(/no trace/);
  });
});
