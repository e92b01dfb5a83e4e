// The container image, checked without a Docker engine (none runs here): hadolint passes, every
// path the Dockerfile copies exists and is let into the build context by .dockerignore, the
// runtime stage holds exactly what package.json "files" ships plus production dependencies, runs
// as a non-root user and starts the CLI, and the Kubernetes manifests use the image name that
// package.json "config.image" and the README give. Building and running the image is not tested.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { pyenvPython } from '../helpers/run-setup.js';

interface Instruction {
  op: string;
  args: string;
}
interface Stage {
  name: string;
  from: string;
  steps: Instruction[];
}

/** Instructions per stage: continuation lines joined, comments and blank lines dropped. */
function stages(text: string): Stage[] {
  const out: Stage[] = [];
  const logical = text.replace(/\\\n/g, ' ').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  for (const line of logical) {
    const [, op = '', args = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    if (op.toUpperCase() === 'FROM') {
      const [from = '', , name = String(out.length)] = args.split(/\s+/);
      out.push({ name, from, steps: [] });
    } else out.at(-1)!.steps.push({ op: op.toUpperCase(), args });
  }
  return out;
}

/** A COPY's flags, sources and destination (shell form; the Dockerfile uses no JSON-form COPY). */
function copyOf(args: string): { from?: string; sources: string[]; dest: string } {
  const words = args.split(/\s+/);
  const from = words.find((w) => w.startsWith('--from='))?.slice('--from='.length);
  const paths = words.filter((w) => !w.startsWith('--'));
  return { ...(from ? { from } : {}), sources: paths.slice(0, -1), dest: paths.at(-1)! };
}

const strip = (p: string) => p.replace(/^\.\//, '').replace(/\/+$/, '');
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string; files: string[]; bin: Record<string, string>; config: { image: string } };
const all = stages(readFileSync('Dockerfile', 'utf8'));
const build = all.find((s) => s.name === 'build')!;
const runtime = all.at(-1)!;
const copies = (s: Stage) => s.steps.filter((i) => i.op === 'COPY').map((i) => copyOf(i.args));
const lastOf = (s: Stage, op: string) => s.steps.filter((i) => i.op === op).at(-1)?.args;

describe('Dockerfile', () => {
  it('passes hadolint', () => {
    const python = pyenvPython();
    expect(python, 'scripts/pyenv.sh provides hadolint').not.toBeNull();
    const hadolint = join(dirname(python!), 'hadolint');
    // Exit code 1 with the findings on stdout when anything is reported, info level included.
    const run = () => execFileSync(hadolint, ['--no-color', 'Dockerfile'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    expect(run).not.toThrow();
  });

  it('has a build stage and a runtime stage on Node 26, the Active LTS line', () => {
    expect(all.map((s) => s.name)).toEqual(['build', 'runtime']);
    for (const s of all) expect(s.from).toMatch(/^node:26(\.|-|$)/);
  });

  it('copies from the build context only paths that exist and that .dockerignore lets in', () => {
    const context = all.flatMap((s) => copies(s).filter((c) => !c.from).flatMap((c) => c.sources.map(strip)));
    for (const p of context) expect(existsSync(p), p).toBe(true);
    const ignore = readFileSync('.dockerignore', 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
    // An allow-list: everything is left out, then exactly the copied paths are let back in.
    expect(ignore[0]).toBe('*');
    expect(new Set(ignore.slice(1).map((l) => strip(l.replace(/^!/, ''))))).toEqual(new Set(context));
  });

  it('compiles the TypeScript the package ships, and the runtime takes the build output from it', () => {
    const tsconfig = JSON.parse(readFileSync('tsconfig.json', 'utf8')) as { include: string[]; compilerOptions: { outDir: string } };
    const built = new Set(copies(build).flatMap((c) => c.sources.map(strip)));
    // bench/ is compiled for `npm run bench` only and left out of the package ("!dist/bench").
    for (const root of tsconfig.include.filter((r) => r !== 'bench')) expect(built, root).toContain(root);
    expect(lastOf(build, 'RUN')).toContain('tsc -p tsconfig.json');
    const fromBuild = copies(runtime).filter((c) => c.from === 'build');
    const buildDir = lastOf(build, 'WORKDIR')!;
    expect(fromBuild.flatMap((c) => c.sources.map(strip))).toEqual([posix.join(buildDir, tsconfig.compilerOptions.outDir)]);
  });

  it('runtime stage: production dependencies and exactly the files package.json ships, non-root, the CLI as entrypoint', () => {
    const app = runtime.steps.find((i) => i.op === 'WORKDIR')!.args;
    const installed = runtime.steps.filter((i) => i.op === 'RUN' && i.args.includes('npm ci'));
    expect(installed.length).toBe(1);
    expect(installed[0]!.args).toContain('--omit=dev');
    // Into the working directory ("./"): the sources' names; into a folder ("dist/"): that folder.
    const dests = copies(runtime).flatMap((c) => (strip(c.dest) === '' || strip(c.dest) === '.' ? c.sources.map((s) => posix.basename(strip(s))) : [strip(c.dest)]));
    expect(new Set(dests)).toEqual(new Set(['package.json', 'package-lock.json', ...pkg.files.filter((f) => !f.startsWith('!'))]));
    const user = lastOf(runtime, 'USER')!;
    expect(user).toMatch(/^\d+(:\d+)?$/); // numeric, so Kubernetes' runAsNonRoot can check it
    expect(Number(user.split(':')[0])).toBeGreaterThan(0);
    expect(JSON.parse(lastOf(runtime, 'ENTRYPOINT')!)).toEqual(['node', posix.join(app, pkg.bin['reasoning-jury']!)]);
  });

  it('is the image the Kubernetes manifests run, under the name the README gives', () => {
    const image = `${pkg.config.image}:${pkg.version}`;
    type PodSpec = { containers: Array<{ image: string }>; securityContext?: Record<string, unknown> };
    const pods = readdirSync('infra/k8s')
      .filter((f) => f.endsWith('.yaml'))
      .flatMap((f) => YAML.parseAllDocuments(readFileSync(join('infra/k8s', f), 'utf8')).map((d) => d.toJS() as { spec?: { template?: { spec?: PodSpec } } }))
      .flatMap((d) => (d.spec?.template?.spec ? [d.spec.template.spec] : []));
    const containers = pods.flatMap((p) => p.containers);
    expect(containers.length).toBeGreaterThanOrEqual(2);
    for (const c of containers) expect(c.image).toBe(image);
    // The pods insist on the image's own non-root user.
    const [uid, gid] = lastOf(runtime, 'USER')!.split(':').map(Number);
    for (const pod of pods) expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: uid, runAsGroup: gid });
    expect(readFileSync('README.md', 'utf8')).toContain(pkg.config.image);
    expect(readFileSync('Dockerfile', 'utf8')).toContain(pkg.config.image);
  });
});
