/**
 * The public surface is deliberate: the API report (etc/reasoning-jury.api.md) and the API
 * reference (docs/api.md) are regenerated from the build's declarations (dist/types, emitted by
 * scripts/api-types.mjs in `npm run build`) and must equal the committed files. A deliberate
 * change to a public declaration makes the report differ: shown here on a copy of the types.
 */
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script, no declarations
import { apiReference, apiReport, closure, REFERENCE_PATH, REPORT_PATH, TYPES_DIR } from '../../scripts/api-types.mjs';
import { tempDir } from '../helpers/run-setup.js';

const dir = tempDir('api-report');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the API report', () => {
  it('the build ships declarations for the public surface only', () => {
    expect(existsSync(join(TYPES_DIR, 'src/api/index.d.ts'))).toBe(true);
    const files = closure(TYPES_DIR) as string[];
    expect(files.filter((f) => !/^(src\/api|schemas)\//.test(f))).toEqual(['src/config/load.d.ts', 'src/llm/outage.d.ts', 'src/util/errors.d.ts']);
  });

  it('etc/reasoning-jury.api.md and docs/api.md are current (npm run docs:api)', () => {
    expect(apiReport(TYPES_DIR)).toBe(readFileSync(REPORT_PATH, 'utf8'));
    expect(apiReference(TYPES_DIR)).toBe(readFileSync(REFERENCE_PATH, 'utf8'));
  });

  it('fails on a change to the surface: a new parameter of juryStream', () => {
    const copy = join(dir, 'types');
    cpSync(TYPES_DIR, copy, { recursive: true });
    const file = join(copy, 'src/api/stream.d.ts');
    writeFileSync(file, readFileSync(file, 'utf8').replace('juryStream(options: JuryStreamOptions)', 'juryStream(options: JuryStreamOptions, extra?: number)'));
    const changed = apiReport(copy) as string;
    expect(changed).not.toBe(readFileSync(REPORT_PATH, 'utf8'));
    expect(changed).toContain('extra?: number');
    // A comment alone is not a change to the surface.
    writeFileSync(file, `// a note\n${readFileSync(join(TYPES_DIR, 'src/api/stream.d.ts'), 'utf8')}`);
    expect(apiReport(copy)).toBe(readFileSync(REPORT_PATH, 'utf8'));
  });
});
