// One output, one consumer group: a second group pointed at an output the first one writes is
// refused in one line (it would read every partition again and race on every range), unless
// --allow-other-group says so, which is warned about.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { LONG_TEST_MS } from '../helpers/progress.js';
import { tempDir } from '../helpers/run-setup.js';
import { kafkaFixture, type KafkaFixture } from './helpers/fixture.js';
import { ensureServices } from './helpers/services.js';

ensureServices();

describe('two consumer groups on one output', () => {
  let f: KafkaFixture;
  beforeAll(async () => {
    f = await kafkaFixture('groups', { records: 40, bad: 0, partitions: 2 });
  }, LONG_TEST_MS);
  afterAll(async () => f?.cleanup());

  it('the second group is refused in one line; --allow-other-group goes on with a warning', async () => {
    const config = f.config(tempDir('kafka-groups'), {}, 0, 'single');
    const first = await runCli(f.args(config, ['--range-records', '20']), { progress: () => f.manifests() });
    expect(first.code, first.stderr).toBe(0);
    const otherArgs = f.args(config, ['--range-records', '20']).map((a) => (a === `kafka://${f.topic}` ? `kafka://${f.topic}?group=${f.group}-other` : a));
    const refused = await runCli(otherArgs);
    expect(refused.code).toBe(2);
    const lines = refused.stderr.trim().split('\n').filter((l) => l.trim() && !/NodeVersionSupportWarning|AWS SDK|node >=22|upgrade to node|a\.co\/|trace-warnings|versions published|To continue receiving|security updates|More information/.test(l));
    expect(lines, refused.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`--input: s3://${f.bucket}/out is written by consumer group "${f.group}", not "${f.group}-other": use that group, another --out, or --allow-other-group`));
    const allowed = await runCli([...otherArgs, '--allow-other-group'], { progress: () => f.manifests() });
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(allowed.stderr).toMatch(/warn: .* is also written by consumer group\(s\) ".*"; --allow-other-group given/);
    await f.admin.deleteGroups([`${f.group}-other`]).catch(() => undefined);
  }, LONG_TEST_MS);
});
