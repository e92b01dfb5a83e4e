import { afterAll, expect, it } from 'vitest';

afterAll(() => {
  throw new Error('teardown failed');
});
it('passes before a teardown that throws', () => expect(1).toBe(1));
