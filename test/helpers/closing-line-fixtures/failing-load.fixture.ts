import { expect, it } from 'vitest';

throw new Error('this file does not load');
it('is never collected', () => expect(1).toBe(1));
