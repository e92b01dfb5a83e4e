import { describe, expect, it } from 'vitest';
import { longestFirst } from './sequencer.js';

const file = (project: string, path: string) => ({ project: { name: project }, moduleId: `/repo/${path}` });

describe('longestFirst (the suite order)', () => {
  it('starts the recorded longest files first, keeps the given order for the rest and for ties', () => {
    const base = [file('shared', 'test/a.test.ts'), file('shared', 'test/b.test.ts'), file('shared', 'test/c.test.ts'), file('shared', 'test/d.test.ts'), file('shared', 'test/e.test.ts')];
    const order = longestFirst(base, { 'test/c.test.ts': 30, 'test/e.test.ts': 100, 'test/d.test.ts': 30 }, '/repo').map((f) => f.moduleId.slice(6));
    expect(order).toEqual(['test/e.test.ts', 'test/c.test.ts', 'test/d.test.ts', 'test/a.test.ts', 'test/b.test.ts']);
  });

  it('never mixes projects: each keeps its place in the given order', () => {
    const base = [file('isolated', 'test/x.test.ts'), file('shared', 'test/a.test.ts'), file('shared', 'test/long.test.ts')];
    const order = longestFirst(base, { 'test/long.test.ts': 200, 'test/x.test.ts': 1 }, '/repo').map((f) => `${f.project.name}:${f.moduleId.slice(6)}`);
    expect(order).toEqual(['isolated:test/x.test.ts', 'shared:test/long.test.ts', 'shared:test/a.test.ts']);
  });
});
