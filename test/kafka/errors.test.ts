// Misconfigured Kafka / S3 inputs and outputs fail before any work, with one clear line.
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { fastSimConfig, tempDir } from '../helpers/run-setup.js';
import { ensureServices, runId } from './helpers/services.js';

ensureServices();

describe('run: clear errors for Kafka and S3 settings', () => {
  const dir = tempDir('kafka-err');
  const config = fastSimConfig(dir);
  const out = `${dir}/out`;
  const cases: Array<[string, string[], NodeJS.ProcessEnv, RegExp]> = [
    ['a topic that does not exist', ['--input', `kafka://rjt-missing-${runId()}`, '--out', out], {}, /Kafka topic\(s\) not found on .*: rjt-missing-/],
    ['an invalid topic name', ['--input', 'kafka://a+b', '--out', out], {}, /invalid Kafka topic name "a\+b"/],
    ['no brokers anywhere', ['--input', 'kafka://t', '--out', out], { KAFKA_BROKERS: '' }, /no Kafka brokers: set kafka\.brokers/],
    ['an input bucket that does not exist', ['--input', `s3://rjt-missing-${runId()}/in`, '--out', out], {}, /cannot list s3:\/\/rjt-missing-.*NoSuchBucket/],
    ['an output bucket that does not exist', ['--out', `s3://rjt-missing-${runId()}/out`], {}, /cannot use S3 bucket "rjt-missing-[0-9a-f]+": NoSuchBucket/],
    ['a rank outside the world', ['--input', 's3://b/x', '--out', out, '--world-size', '2', '--rank', '2'], {}, /--rank must be a whole number below --world-size 2/],
  ];
  it.each(cases)('%s', async (_name, args, env, message) => {
    const res = await runCli(['run', '--config', config, '--progress', 'none', ...args], { env });
    expect(res.code, res.stderr).toBe(2);
    expect(res.stderr).toMatch(message);
    expect(res.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });
});
