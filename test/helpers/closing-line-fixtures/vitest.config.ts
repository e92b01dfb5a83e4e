// The fixture suite of test/package/closing-line.test.ts: each file fails in one way a run can.
import { defineConfig } from 'vitest/config';

export default defineConfig({ test: { include: [process.env.RJ_FIXTURE ?? '*.fixture.ts'], pool: 'forks', maxWorkers: 1 } });
