import { expect, it } from 'vitest';

it('passes while leaving a rejection nobody handles', () => {
  void Promise.reject(new Error('nobody awaited this'));
  expect(1).toBe(1);
});
