// The Kubernetes manifests in infra/k8s stay consistent with the CLI and the config schema:
// every flag they pass exists, the mounted jury.yaml is a valid config, and KEDA watches the
// group and topic the Deployment actually consumes.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { parseKafkaUrl } from '../../connectors/kafka/options.js';
import { parseConfig } from '../../src/config/load.js';
import { runCli } from '../helpers/cli.js';

type Doc = { kind: string; metadata: { name: string }; spec: Record<string, any>; data?: Record<string, string> };
const DIR = join('infra', 'k8s');
const docs: Doc[] = readdirSync(DIR)
  .filter((f) => f.endsWith('.yaml'))
  .flatMap((f) => YAML.parseAllDocuments(readFileSync(join(DIR, f), 'utf8')).map((d) => d.toJS() as Doc));
const one = (kind: string) => docs.find((d) => d.kind === kind)!;
const argValue = (args: string[], flag: string) => args[args.indexOf(flag) + 1]!;

describe('infra/k8s manifests', () => {
  it('parse, and contain the expected objects', () => {
    expect(docs.map((d) => d.kind).sort()).toEqual(['ConfigMap', 'Deployment', 'Job', 'ScaledObject', 'ServiceAccount']);
  });

  it('pass only flags that `run` knows, and mount a valid jury config', async () => {
    const help = (await runCli(['run', '--help'])).stdout;
    for (const kind of ['Deployment', 'Job']) {
      const args: string[] = one(kind).spec.template.spec.containers[0].args;
      expect(args[0]).toBe('run');
      for (const flag of args.filter((a) => a.startsWith('--'))) expect(help, `${kind} uses ${flag}`).toContain(flag);
    }
    const cfg = parseConfig(YAML.parse(one('ConfigMap').data!['jury.yaml']!), 'infra/k8s/configmap.yaml');
    expect(cfg.kafka?.group_id).toBeTruthy();
  });

  it('KEDA scales the Deployment on the lag of the group and topic it consumes', () => {
    const cfg = YAML.parse(one('ConfigMap').data!['jury.yaml']!);
    const deploy = one('Deployment');
    const so = one('ScaledObject');
    const trigger = so.spec.triggers[0];
    const input = parseKafkaUrl(argValue(deploy.spec.template.spec.containers[0].args, '--input'));
    expect(so.spec.scaleTargetRef.name).toBe(deploy.metadata.name);
    expect(trigger.type).toBe('kafka');
    expect(trigger.metadata.consumerGroup).toBe(input.group ?? cfg.kafka.group_id);
    expect(input.topics).toEqual([trigger.metadata.topic]);
    expect(trigger.metadata.bootstrapServers).toBe(one('ConfigMap').data!.KAFKA_BROKERS);
  });

  it('the backfill is an indexed Job whose size matches --world-size', () => {
    const job = one('Job');
    const args: string[] = job.spec.template.spec.containers[0].args;
    expect(job.spec.completionMode).toBe('Indexed');
    expect(Number(argValue(args, '--world-size'))).toBe(job.spec.completions);
    expect(job.spec.parallelism).toBe(job.spec.completions);
    expect(argValue(args, '--input')).toMatch(/^s3:\/\//);
    expect(args).not.toContain('--rank'); // comes from JOB_COMPLETION_INDEX
  });
});
