/**
 * The output-folder checks of src/compose/output-claim.ts that the CLI tests cannot reach on
 * this machine (no read-only mount for EROFS) and the nesting rule's edges (s3:// prefixes end
 * on '/', a sibling that shares a name prefix is not inside).
 */
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkNesting, notWritable, OutputFolderError } from '../../src/compose/output-claim.js';
import { tempDir } from '../helpers/run-setup.js';

describe('output folder checks', () => {
  it('names EROFS and EACCES as such; other errors pass through unchanged', () => {
    const erofs = notWritable('/mnt/ro/out', Object.assign(new Error('EROFS: read-only file system, mkdir'), { code: 'EROFS' }));
    expect(erofs).toBeInstanceOf(OutputFolderError);
    expect(erofs.message).toBe('--out /mnt/ro/out is not writable: read-only file system (EROFS); give a folder this user can write');
    expect(notWritable('/x', Object.assign(new Error('denied'), { code: 'EACCES' })).message).toContain('permission denied (EACCES)');
    const other = Object.assign(new Error('disk on fire'), { code: 'EIO' });
    expect(notWritable('/x', other)).toBe(other);
  });

  it('refuses --out inside --input and the reverse, locally (symlinks resolved) and on S3; siblings are fine', () => {
    const dir = tempDir('nest');
    mkdirSync(join(dir, 'in'));
    symlinkSync(join(dir, 'in'), join(dir, 'link'));
    expect(() => checkNesting(join(dir, 'in'), join(dir, 'in', 'out'))).toThrow(/--out .* is inside --input/);
    expect(() => checkNesting(join(dir, 'in'), join(dir, 'link', 'out'))).toThrow(/--out .* is inside --input/);
    expect(() => checkNesting(join(dir, 'in', 'a.jsonl'), dir)).toThrow(/--input .* is inside --out/);
    expect(() => checkNesting(join(dir, 'in'), join(dir, 'in-out'))).not.toThrow();
    expect(() => checkNesting('s3://b/in', 's3://b/in/out')).toThrow(/is inside --input/);
    expect(() => checkNesting('s3://b/in', 's3://b/input-out')).not.toThrow();
    expect(() => checkNesting('kafka://topic', dir)).not.toThrow();
  });
});
