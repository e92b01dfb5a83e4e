/**
 * The juror simulator as a separate process (`reasoning-jury simulate`), for outage tests: it
 * can be SIGKILLed mid-run and started again on the same port, as an operator would restart a
 * model server.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { BIN } from './cli.js';

export interface SimProcess {
  port: number;
  /** base_url for an endpoint of kind openai */
  url: string;
  /** SIGKILL: connections are refused until start() */
  kill(): Promise<void>;
  /** (re)starts it on the same port */
  start(): Promise<void>;
}

/** A fault-free profile with a small latency, so a run lasts long enough to be interrupted. */
export function simProfile(dir: string, latency: unknown): string {
  const path = join(dir, 'sim-profile.yaml');
  writeFileSync(path, YAML.stringify({ seed: 9, models: { default: { latency_ms: latency, recall: 0.6, false_positive_rate: 0.05 } } }));
  return path;
}

function launch(port: number, profile: string): Promise<{ child: ChildProcess; port: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'simulate', '--port', String(port), '--profile', profile], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on http:\/\/[^:]+:(\d+)/.exec(out);
      if (m) resolve({ child, port: Number(m[1]) });
    });
    child.stderr!.on('data', (d) => (err += d));
    child.on('exit', (code) => reject(new Error(`simulator exited with ${code} before listening: ${err}`)));
  });
}

export async function startSimProcess(profile: string): Promise<SimProcess> {
  let { child, port } = await launch(0, profile);
  const sim: SimProcess = {
    port,
    url: `http://127.0.0.1:${port}/v1`,
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await gone;
    },
    async start() {
      ({ child } = await launch(port, profile));
    },
  };
  return sim;
}
