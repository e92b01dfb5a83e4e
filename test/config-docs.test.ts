import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { JuryConfig } from '../schemas/config.js';
import { referenceSections, renderConfigReference } from '../src/config/reference.js';
import { packageRoot } from '../src/util/paths.js';

describe('docs/config.md', () => {
  it('is what the schemas generate (run `npm run docs:config` after changing a schema)', () => {
    const onDisk = readFileSync(join(packageRoot(), 'docs', 'config.md'), 'utf8');
    // A plain equality check first: a diff of two 40 kB strings buries the one-line message.
    if (onDisk !== renderConfigReference()) {
      expect.fail('docs/config.md is out of date with the zod schemas: regenerate it with `npm run docs:config` and commit the result');
    }
  });

  it('lists every leaf key of JuryConfig, each with a meaning', () => {
    const rows = referenceSections().flatMap((s) => s.rows);
    const paths = new Set(rows.map((r) => r.path));
    for (const r of rows) expect(r.meaning.length, r.path).toBeGreaterThan(10);
    // Spot checks across sections, from the JSON Schema zod derives independently of the walker.
    const js = z.toJSONSchema(JuryConfig, { io: 'input', unrepresentable: 'any' }) as { properties: Record<string, unknown> };
    for (const key of Object.keys(js.properties)) expect(paths.has(key), key).toBe(true);
    for (const p of ['endpoints.<name>.api_key_env', '<seat>.temperature', 'segmentation.max_steps', 'filter.rules[].min_impact', 'input.mapping.meta', 'taxonomy.assigner', 'deliberation.adaptive.max_rounds', 'kafka.sasl.password_env', 's3.part_size_mb']) {
      expect(paths.has(p), p).toBe(true);
    }
  });

  it('refuses a key without a description, naming it', () => {
    const schema = z.object({ described: z.int().describe('A key with a meaning.'), section: z.object({ bare: z.string() }).describe('A section.') });
    expect(() => referenceSections(schema)).toThrow('config key section.bare has no description');
  });
});
