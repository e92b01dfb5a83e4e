/**
 * The storage the shard committer writes to. Keys are '/'-separated paths relative to the
 * store's root (the output folder, or an S3 bucket + prefix); a put is all-or-nothing, so a
 * reader never sees half a file. The local store gets that from write-temp + fsync + rename;
 * an S3 store gets it from PutObject for free.
 */
import { randomBytes } from 'node:crypto';
import { link, mkdir, open, readFile, readdir, rename, rm, rmdir, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { ReasoningJuryError } from '../../util/errors.js';

export interface ObjectStore {
  /** Atomically create or replace `key` with `bytes`, durable once the promise resolves. */
  putObject(key: string, bytes: Uint8Array): Promise<void>;
  /**
   * Creates `key` only when no object has it: link(2) of a finished temp file locally, a PUT
   * with `If-None-Match: *` on S3. Throws ObjectExistsError when the key is taken, so of two
   * writers racing for one key exactly one wins. Manifests and leases are written with it; a
   * store without it cannot promise that (its writers rely on the output's lease alone).
   */
  createObject?(key: string, bytes: Uint8Array): Promise<void>;
  exists(key: string): Promise<boolean>;
  /** Keys starting with `prefix` (plain string prefix, as in S3), sorted. */
  list(prefix: string): Promise<string[]>;
  /** The object's bytes, or null when there is none. */
  get(key: string): Promise<Uint8Array | null>;
  /** Human-readable location of a key (a path or URL) for logs and readers. */
  locate(key: string): string;
  /**
   * Moves an object to another key (replacing what is there), atomically for a reader of `to`:
   * rename(2) locally, CopyObject then DeleteObject on S3. The range commit publishes staged
   * parts with it; a store without it gets each part written straight to its key.
   */
  move?(from: string, to: string): Promise<void>;
  /** Removes an object; a missing one is not an error (retracted ranges, published staged parts). */
  delete?(key: string): Promise<void>;
  /** Keys after `startAfter` only, when the store can ask for that (S3 StartAfter). */
  listAfter?(prefix: string, startAfter: string | undefined): Promise<string[]>;
  /**
   * True when `err` (thrown by this store) is an outage worth waiting out rather than an answer:
   * a refused or reset connection, a timeout, a 5xx or throttling reply, a full disk. The stage
   * retries those for `--max-storage-outage` (./storage-retry.ts); absent: nothing is retried.
   */
  isTransient?(err: unknown): boolean;
}

/**
 * A create-only put (createObject) found the key already there: another writer got there first.
 * The range commit turns it into "already committed by someone else", the lease into "held".
 */
export class ObjectExistsError extends ReasoningJuryError {
  override get kind() {
    return 'storage' as const;
  }
  constructor(readonly key: string) {
    super(`object already exists: ${key}`);
    this.name = 'ObjectExistsError';
  }
}

/** `list(prefix)` restricted to keys after `startAfter`, with one request where the store can. */
export async function listKeysAfter(store: ObjectStore, prefix: string, startAfter: string | undefined): Promise<string[]> {
  if (store.listAfter) return store.listAfter(prefix, startAfter);
  const all = await store.list(prefix);
  return startAfter === undefined ? all : all.filter((k) => k > startAfter);
}

/** Rejects keys that could escape the root or collide with temp files. */
export function assertKey(key: string): void {
  const segs = key.split('/');
  const bad =
    key.length === 0 ||
    key.includes('\\') ||
    key.includes('\0') ||
    segs.some((s) => s === '' || s === '.' || s === '..') ||
    basename(key).endsWith(TEMP_SUFFIX);
  if (bad) throw new Error(`invalid object key: ${JSON.stringify(key)}`);
}

const TEMP_SUFFIX = '.rjtmp';
// Leading '.' hides temp files from Spark, pyarrow.dataset and DuckDB globbing of the tree.
const isTemp = (name: string) => name.startsWith('.') && name.endsWith(TEMP_SUFFIX);

/**
 * Local errors an operator can clear while the stage waits: a full disk or quota (files can be
 * deleted), I/O errors and stale handles of network file systems, too many open files, a busy
 * or temporarily unavailable resource. Access denied or a read-only file system are not: they
 * need a configuration change, so they fail at once.
 */
const TRANSIENT_FS_CODES = new Set(['ENOSPC', 'EDQUOT', 'EIO', 'EAGAIN', 'EBUSY', 'EMFILE', 'ENFILE', 'ESTALE', 'ETIMEDOUT', 'EINTR']);

export function isTransientFsError(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' && TRANSIENT_FS_CODES.has(code);
}

/** fsync a directory so a rename / new entry in it survives a crash. */
async function fsyncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } catch (e) {
    // Some filesystems refuse fsync on directories (EINVAL/EISDIR); the rename is still atomic.
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'EINVAL' && code !== 'EISDIR' && code !== 'EPERM') throw e;
  } finally {
    await fh.close();
  }
}

/**
 * The output folder was there and is gone: the run stops rather than recreate it, since the
 * ranges committed in it so far went with it and a summary counting them would be false.
 */
export class OutputGoneError extends ReasoningJuryError {
  /** the command exits 1 with this line as it is (no stack hint): there is nothing to debug */
  override get kind() {
    return 'output' as const;
  }

  constructor(readonly root: string) {
    super(`the output folder ${root} vanished while this command was writing it; it is not recreated, and the ranges committed in it are gone with it`);
    this.name = 'OutputGoneError';
  }
}

export class LocalObjectStore implements ObjectStore {
  readonly root: string;
  /** set once the root was seen: from then on a missing root is an error, never recreated */
  private rootSeen = false;

  constructor(root: string) {
    this.root = resolve(root);
  }

  /**
   * mkdir -p for a folder under the root; the root itself only while it was never seen, so a
   * folder deleted under a running command stops it (OutputGoneError) instead of coming back
   * empty.
   */
  private async makeDir(dir: string): Promise<string | undefined> {
    if (this.rootSeen) {
      try {
        await stat(this.root);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new OutputGoneError(this.root);
        throw e;
      }
    }
    const created = await mkdir(dir, { recursive: true });
    this.rootSeen = true;
    return created;
  }

  /** Writes `bytes` to a fresh temp file next to `path`, fsynced: the caller renames or links it. */
  private async writeTemp(path: string, bytes: Uint8Array): Promise<string> {
    // Same folder as the target: rename(2) and link(2) work only within one filesystem.
    const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`);
    const fh = await open(tmp, 'wx');
    try {
      await fh.writeFile(bytes);
      await fh.sync();
    } catch (e) {
      await fh.close().catch(() => {});
      await rm(tmp, { force: true });
      throw e;
    }
    await fh.close();
    return tmp;
  }

  /** Makes a new entry of `dir` durable, and the folders mkdir created for it. */
  private async syncNewEntry(dir: string, created: string | undefined): Promise<void> {
    await fsyncDir(dir);
    if (created) {
      for (let d = dir; d.length >= created.length && d !== dirname(d); d = dirname(d)) await fsyncDir(dirname(d));
    }
  }

  locate(key: string): string {
    assertKey(key);
    return join(this.root, ...key.split('/'));
  }

  isTransient(err: unknown): boolean {
    return isTransientFsError(err);
  }

  async putObject(key: string, bytes: Uint8Array): Promise<void> {
    const path = this.locate(key);
    const dir = dirname(path);
    const created = await this.makeDir(dir);
    const tmp = await this.writeTemp(path, bytes);
    try {
      await rename(tmp, path);
    } catch (e) {
      await rm(tmp, { force: true });
      throw e;
    }
    await this.syncNewEntry(dir, created);
  }

  /** link(2) fails with EEXIST when the name is taken, and never replaces it: create-only. */
  async createObject(key: string, bytes: Uint8Array): Promise<void> {
    const path = this.locate(key);
    const dir = dirname(path);
    const created = await this.makeDir(dir);
    const tmp = await this.writeTemp(path, bytes);
    try {
      await link(tmp, path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') throw new ObjectExistsError(key);
      throw e;
    } finally {
      await rm(tmp, { force: true });
    }
    await this.syncNewEntry(dir, created);
  }

  async move(from: string, to: string): Promise<void> {
    const src = this.locate(from);
    const dst = this.locate(to);
    const dir = dirname(dst);
    const created = await this.makeDir(dir);
    try {
      await rename(src, dst);
    } catch (e) {
      // A retried or repeated publish: the first one already moved it.
      if ((e as NodeJS.ErrnoException).code === 'ENOENT' && (await this.exists(to))) return;
      throw e;
    }
    await this.syncNewEntry(dir, created);
    if (dirname(src) !== dir) await fsyncDir(dirname(src));
    await this.pruneEmpty(dirname(src));
  }

  async delete(key: string): Promise<void> {
    const path = this.locate(key);
    await rm(path, { force: true });
    await fsyncDir(dirname(path)).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'ENOENT') throw e;
    });
    await this.pruneEmpty(dirname(path));
  }

  /**
   * Removes folders a move or delete left empty, as S3 has no folders to leave behind. Top-level
   * folders (`_staging/`, the tables) stay: other writers may be creating entries in them.
   */
  private async pruneEmpty(dir: string): Promise<void> {
    for (let d = dir; dirname(d) !== this.root && d.startsWith(`${this.root}/`); d = dirname(d)) {
      try {
        await rmdir(d);
      } catch {
        return; // not empty (or already gone): stop here
      }
    }
  }

  async exists(key: string): Promise<boolean> {
    try {
      return (await stat(this.locate(key))).isFile();
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw e;
    }
  }

  async get(key: string): Promise<Uint8Array | null> {
    try {
      const buf = await readFile(this.locate(key));
      return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'EISDIR') return null;
      throw e;
    }
  }

  async list(prefix: string): Promise<string[]> {
    // Walk only the deepest folder the prefix names fully, then filter by string prefix.
    const cut = prefix.lastIndexOf('/');
    const base = cut < 0 ? '' : prefix.slice(0, cut);
    if (base) assertKey(base);
    const out: string[] = [];
    const walk = async (rel: string): Promise<void> => {
      let entries;
      try {
        entries = await readdir(rel ? join(this.root, ...rel.split('/')) : this.root, { withFileTypes: true });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR') return;
        throw e;
      }
      for (const ent of entries) {
        const key = rel ? `${rel}/${ent.name}` : ent.name;
        if (ent.isDirectory()) {
          if (prefix.startsWith(`${key}/`) || key.startsWith(prefix) || `${key}/`.startsWith(prefix)) await walk(key);
        } else if (ent.isFile() && !isTemp(ent.name) && key.startsWith(prefix)) {
          out.push(key);
        }
      }
    };
    await walk(base);
    return out.sort();
  }
}

/** In-memory store for unit tests of code above the store. */
export class MemoryObjectStore implements ObjectStore {
  readonly objects = new Map<string, Uint8Array>();
  locate(key: string): string {
    assertKey(key);
    return `memory:///${key}`;
  }
  async putObject(key: string, bytes: Uint8Array): Promise<void> {
    assertKey(key);
    this.objects.set(key, bytes.slice());
  }
  async createObject(key: string, bytes: Uint8Array): Promise<void> {
    assertKey(key);
    if (this.objects.has(key)) throw new ObjectExistsError(key);
    this.objects.set(key, bytes.slice());
  }
  async move(from: string, to: string): Promise<void> {
    assertKey(to);
    const bytes = this.objects.get(from);
    if (!bytes) throw Object.assign(new Error(`no such object: ${from}`), { code: 'ENOENT' });
    this.objects.set(to, bytes);
    this.objects.delete(from);
  }
  async delete(key: string): Promise<void> {
    this.objects.delete(key);
  }
  async exists(key: string): Promise<boolean> {
    return this.objects.has(key);
  }
  async get(key: string): Promise<Uint8Array | null> {
    return this.objects.get(key)?.slice() ?? null;
  }
  async list(prefix: string): Promise<string[]> {
    return [...this.objects.keys()].filter((k) => k.startsWith(prefix)).sort();
  }
}
