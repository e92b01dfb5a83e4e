import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { packageRoot } from '../../src/util/paths.js';
import { runCli } from '../helpers/cli.js';

const INPUT = join(packageRoot(), 'examples', 'traces');

const valid = () => ({
  endpoints: { sim: { kind: 'simulator' } },
  jurors: [
    { id: 'j0', endpoint: 'sim', model: 'sim-juror-a' },
    { id: 'j1', endpoint: 'sim', model: 'sim-juror-b' },
  ],
  mode: 'majority',
  cache: { enabled: false },
});

describe('a broken config or input path is one clear line through the real CLI', () => {
  let dir: string;
  const write = (name: string, body: unknown): string => {
    const p = join(dir, name);
    writeFileSync(p, typeof body === 'string' ? body : YAML.stringify(body));
    return p;
  };
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'rj-broken-'));
    writeFileSync(join(dir, 'a-file'), 'not a folder');
  });

  // [name, command-line args after `run`, what the line must name (key and path)]
  const cases: Array<[string, () => string[], () => RegExp[]]> = [
    ['missing config file', () => ['-c', join(dir, 'nope.yaml')], () => [/cannot read config/, new RegExp(`${dir}/nope\\.yaml`)]],
    ['bad YAML', () => ['-c', write('bad.yaml', 'jurors: [1,\n  - x: ]\n')], () => [/cannot parse/, /bad\.yaml/]],
    ['unknown key', () => ['-c', write('unknown.yaml', { ...valid(), jurors: [{ id: 'j0', endpoint: 'sim', model: 'm', temprature: 1 }] })], () => [/jurors\.0: Unrecognized key: "temprature"/, /unknown\.yaml/]],
    ['wrong type', () => ['-c', write('type.yaml', { ...valid(), endpoints: { sim: { kind: 'simulator', max_concurrency: 'lots' } } })], () => [/endpoints\.sim\.max_concurrency:/, /type\.yaml/]],
    ['bad enum', () => ['-c', write('enum.yaml', { ...valid(), mode: 'unanimous' })], () => [/mode:/, /enum\.yaml/]],
    ['missing taxonomy file', () => ['-c', write('tax.yaml', { ...valid(), taxonomy: { file: 'missing-tax.json' } })], () => [/taxonomy\.file: no such file/, new RegExp(`${dir}/missing-tax\\.json`)]],
    ['nonexistent input path', () => ['-c', write('ok.yaml', valid()), '-i', join(dir, 'no-such-input.jsonl')], () => [/--input/, /no-such-input\.jsonl/]],
    ['prompts_dir that is not a folder', () => ['-c', write('prompts.yaml', { ...valid(), prompts_dir: 'a-file' })], () => [/prompts_dir:/, new RegExp(`${dir}/a-file is not a folder`)]],
    ['cache dir that cannot be created', () => ['-c', write('cache.yaml', { ...valid(), cache: { enabled: true, dir: 'a-file/cache' } })], () => [/cache\.dir: cannot create/, new RegExp(`${dir}/a-file`)]],
    ['bad URL scheme', () => ['-c', write('ok2.yaml', valid()), '-o', 'ftp://host/out'], () => [/--out: unsupported URL scheme "ftp:\/\/"/, /ftp:\/\/host\/out/]],
    ['duplicate seat id', () => ['-c', write('dup.yaml', { ...valid(), jurors: [{ id: 'j0', endpoint: 'sim', model: 'a' }, { id: 'j0', endpoint: 'sim', model: 'b' }] })], () => [/jurors\.1\.id: duplicate juror id "j0"/, /dup\.yaml/]],
    ['missing simulator profile', () => ['-c', write('profile.yaml', { ...valid(), endpoints: { sim: { kind: 'simulator', profile: 'no-profile.yaml' } } })], () => [/endpoints\.sim\.profile: no such file/, new RegExp(`${dir}/no-profile\\.yaml`)]],
  ];

  it.each(cases)('%s', async (_name, args, expected) => {
    const a = args();
    const res = await runCli(['run', ...(a.includes('-i') ? [] : ['-i', INPUT]), ...(a.includes('-o') ? [] : ['-o', join(dir, 'out')]), '--progress', 'none', ...a]);
    expect(res.code).toBe(2);
    const lines = res.stderr.split('\n').filter((l) => l.trim() !== '');
    expect(lines, res.stderr).toHaveLength(1);
    for (const re of expected()) expect(lines[0]).toMatch(re);
    expect(res.stderr).not.toMatch(/\n\s+at |Error:|\.ts:\d+|\.js:\d+/);
    expect(res.stdout).toBe('');
  });

  it('covers at least ten distinct mistakes', () => {
    expect(new Set(cases.map((c) => c[0])).size).toBeGreaterThanOrEqual(10);
  });
});

describe('config paths are relative to the config file', () => {
  it('taxonomy file, prompts dir, simulator profile, cache dir and audit log resolve next to the config, from any working directory', async () => {
    const root = mkdtempSync(join(tmpdir(), 'rj-relpaths-'));
    const cfgDir = join(root, 'conf');
    const elsewhere = join(root, 'somewhere', 'else');
    mkdirSync(join(cfgDir, 'my-prompts'), { recursive: true });
    mkdirSync(elsewhere, { recursive: true });
    // A template override whose marker must reach the model (so the dir was really read).
    const { readFileSync } = await import('node:fs');
    const shipped = readFileSync(join(packageRoot(), 'prompts', 'auditor.system.md'), 'utf8');
    writeFileSync(join(cfgDir, 'my-prompts', 'auditor.system.md'), `${shipped}\n\nMARKER-relative-prompts-7731\n`);
    writeFileSync(join(cfgDir, 'tax.json'), readFileSync(join(packageRoot(), 'taxonomy', 'default.json')));
    writeFileSync(join(cfgDir, 'prof.yaml'), readFileSync(join(packageRoot(), 'examples', 'sim-profile.yaml')));
    writeFileSync(
      join(cfgDir, 'jury.yaml'),
      YAML.stringify({
        ...valid(),
        endpoints: { sim: { kind: 'simulator', profile: 'prof.yaml' } },
        taxonomy: { file: 'tax.json' },
        prompts_dir: 'my-prompts',
        cache: { enabled: true, dir: 'cache' },
        audit_log: { path: 'logs/audit.jsonl' },
      }),
    );
    const res = await runCli(['run', '-c', '../../conf/jury.yaml', '-i', INPUT, '-o', 'out', '--progress', 'none'], { cwd: elsewhere });
    expect(res.code, res.stderr).toBe(0);
    const audit = readFileSync(join(cfgDir, 'logs', 'audit.jsonl'), 'utf8');
    expect(audit).toContain('MARKER-relative-prompts-7731');
    expect(audit).toMatch(/"phase":"taxonomy"/);
    const { readdirSync, existsSync } = await import('node:fs');
    expect(readdirSync(join(cfgDir, 'cache')).length).toBeGreaterThan(0);
    // Outputs named on the command line stay relative to the working directory.
    expect(existsSync(join(elsewhere, 'out', '_commits'))).toBe(true);
  });

  it('examples/jury.yaml runs from another folder', async () => {
    const root = mkdtempSync(join(tmpdir(), 'rj-example-'));
    const copy = join(root, 'examples');
    mkdirSync(copy);
    // A copy, so the run's cache and audit log land in the copy, not in the checkout.
    const { copyFileSync } = await import('node:fs');
    for (const f of ['jury.yaml', 'sim-profile.yaml']) copyFileSync(join(packageRoot(), 'examples', f), join(copy, f));
    const cwd = join(root, 'work');
    mkdirSync(cwd);
    const res = await runCli(['run', '-c', '../examples/jury.yaml', '-i', INPUT, '-o', 'out', '--progress', 'none'], { cwd });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/judged\s+8/);
    const { existsSync } = await import('node:fs');
    expect(existsSync(join(copy, 'out', 'audit.jsonl'))).toBe(true);
  });
});
