import { beforeAll, describe, expect, it } from 'vitest';

describe('a suite whose setup throws', () => {
  beforeAll(() => {
    throw new Error('setup failed');
  });
  it('would pass', () => expect(1).toBe(1));
});
