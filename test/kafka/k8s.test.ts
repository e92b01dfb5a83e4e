// The Kubernetes manifests in infra/k8s stay consistent with the CLI and the config schema:
// every flag they pass exists, the mounted jury.yaml is a valid config, and KEDA watches the
// group and topic the Deployment actually consumes.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { parseKafkaUrl } from '../../connectors/kafka/options.js';
import { parseConfig } from '../../src/config/load.js';
import { startOpsServer } from '../../src/ops/server.js';
import { runCli } from '../helpers/cli.js';

type Doc = { kind: string; metadata: { name: string; annotations?: Record<string, string> }; spec: Record<string, any>; data?: Record<string, string> };
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

describe('infra/k8s probes and scraping', () => {
  const pods = ['Deployment', 'Job'].map((kind) => ({ kind, template: one(kind).spec.template }));

  it('each pod serves --metrics-port on a named containerPort that the probes and the scrape annotations use', () => {
    for (const { kind, template } of pods) {
      const c = template.spec.containers[0];
      const port = Number(argValue(c.args, '--metrics-port'));
      expect(port, kind).toBeGreaterThan(0);
      const named = (c.ports ?? []).find((p: { name: string }) => p.name === 'metrics');
      expect(named?.containerPort, kind).toBe(port);
      expect(c.livenessProbe?.httpGet, kind).toEqual({ path: '/healthz', port: 'metrics' });
      expect(c.readinessProbe?.httpGet, kind).toEqual({ path: '/readyz', port: 'metrics' });
      // A probe that times out before the answer would restart a healthy pod.
      expect(c.livenessProbe.timeoutSeconds, kind).toBeGreaterThanOrEqual(2);
      expect(template.metadata.annotations, kind).toMatchObject({ 'prometheus.io/scrape': 'true', 'prometheus.io/port': String(port), 'prometheus.io/path': '/metrics' });
    }
  });

  it('the probe and scrape paths are ones the ops endpoint answers', async () => {
    const server = await startOpsServer(
      { host: '127.0.0.1', port: 0 },
      { metrics: async () => ({ ok: true, contentType: 'text/plain; version=0.0.4', body: '' }), readiness: () => ({ ready: true, reason: 'ready' }) },
    );
    try {
      for (const { kind, template } of pods) {
        const c = template.spec.containers[0];
        for (const path of [c.livenessProbe.httpGet.path, c.readinessProbe.httpGet.path, template.metadata.annotations['prometheus.io/path']]) {
          expect((await fetch(`${server.url}${path}`)).status, `${kind} ${path}`).toBe(200);
        }
      }
    } finally {
      await server.close();
    }
  });
});
