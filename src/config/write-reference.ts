/** `npm run docs:config`: writes docs/config.md from the schemas (see reference.ts). */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../util/paths.js';
import { renderConfigReference } from './reference.js';

const target = join(packageRoot(), 'docs', 'config.md');
writeFileSync(target, renderConfigReference());
process.stdout.write(`wrote ${target}\n`);
