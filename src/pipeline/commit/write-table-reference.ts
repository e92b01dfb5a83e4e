/** `npm run docs:tables`: writes docs/tables.md from the shard table schemas (see table-reference.ts). */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../util/paths.js';
import { renderTablesReference } from './table-reference.js';

const target = join(packageRoot(), 'docs', 'tables.md');
writeFileSync(target, renderTablesReference());
process.stdout.write(`wrote ${target}\n`);
