import { randomBytes } from 'node:crypto';

/**
 * The Files API's store, in memory: input files a client uploads and the output and error
 * files batches write. Nothing survives the process, like the rest of the simulator.
 */

export interface StoredFile {
  id: string;
  bytes: Buffer;
  filename: string;
  purpose: string;
  created_at: number;
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/**
 * Ids numbered in creation order behind a tag drawn per simulator: a client whose journal names
 * a batch of a simulator that has since restarted gets a 404, never some other batch.
 */
export function idMaker(prefix: string, tag: string): () => string {
  let n = 0;
  return () => `${prefix}${tag}${String(++n).padStart(6, '0')}`;
}

export function instanceTag(): string {
  return `sim${randomBytes(3).toString('hex')}`;
}

export class FileStore {
  private readonly files = new Map<string, StoredFile>();
  private readonly nextId: () => string;
  uploaded = 0;
  uploadedBytes = 0;

  constructor(tag: string) {
    this.nextId = idMaker('file-', tag);
  }

  add(bytes: Buffer, filename: string, purpose: string): StoredFile {
    const f: StoredFile = { id: this.nextId(), bytes, filename, purpose, created_at: nowSeconds() };
    this.files.set(f.id, f);
    return f;
  }

  /** A file a client sent (batch outputs are added with add() and not counted). */
  upload(bytes: Buffer, filename: string, purpose: string): StoredFile {
    this.uploaded++;
    this.uploadedBytes += bytes.length;
    return this.add(bytes, filename, purpose);
  }

  get(id: string): StoredFile | undefined {
    return this.files.get(id);
  }

  delete(id: string): boolean {
    return this.files.delete(id);
  }

  all(): StoredFile[] {
    return [...this.files.values()];
  }
}

/** OpenAI's File object. */
export function fileObject(f: StoredFile): Record<string, unknown> {
  return { id: f.id, object: 'file', bytes: f.bytes.length, created_at: f.created_at, filename: f.filename, purpose: f.purpose, status: 'processed', expires_at: null, status_details: null };
}
