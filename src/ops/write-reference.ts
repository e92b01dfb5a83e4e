/** `npm run docs:metrics`: writes docs/metrics.md from the metrics registry (see reference.ts). */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../util/paths.js';
import { renderMetricsReference } from './reference.js';

const target = join(packageRoot(), 'docs', 'metrics.md');
writeFileSync(target, renderMetricsReference());
process.stdout.write(`wrote ${target}\n`);
