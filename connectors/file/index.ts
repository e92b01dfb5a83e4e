/**
 * Local file source: one file, or a folder tree of JSONL (plain/.gz/.zst) and Parquet files.
 * A `.json` file (top-level array, or JSON Lines under a .json name) is read only when given
 * as the input path itself.
 *
 * Files are read one after another in a fixed order (sorted relative paths, code-unit order,
 * not locale) so a rerun yields the same items in the same order. Positions are
 * { source: 'file', unit: path relative to the input root ('/'-separated), offset }; for a
 * single-file input the unit is its file name.
 */
import { readdir, stat } from 'node:fs/promises';
import { basename, join, relative, resolve, sep } from 'node:path';
import {
  DEFAULT_MAX_RAW_TEXT_BYTES,
  type SizeHint,
  type Source,
  type SourceItem,
  type SourceProgress,
} from '../../src/pipeline/source.js';
import { DEFAULT_READ_CHUNK_BYTES, type ByteCounter, type Compression } from './byte-stream.js';
import { readJsonFile, readJsonl, type JsonlReadOptions } from './jsonl-source.js';

export interface FileSourceOptions {
  /** position.source (default "file"). */
  sourceName?: string;
  /** Max bytes of one JSONL line (default 16 MB). */
  maxLineBytes?: number;
  /** Max bytes of dead-letter rawText (default 64 KB). */
  maxRawTextBytes?: number;
  /** Max size of a `.json` file holding a top-level array (default 64 MB). */
  maxJsonArrayBytes?: number;
  /** Read chunk size for JSONL (default 64 KB). */
  readChunkBytes?: number;
}

export type FileFormat = 'jsonl' | 'json' | 'parquet';

export interface FileEntry {
  path: string;
  /** Relative to the input root, '/'-separated. */
  unit: string;
  format: FileFormat;
  compression: Compression;
  bytes: number;
}

const FORMATS: { suffix: string; format: FileFormat; compression: Compression }[] = [
  { suffix: '.jsonl', format: 'jsonl', compression: 'none' },
  { suffix: '.ndjson', format: 'jsonl', compression: 'none' },
  { suffix: '.jsonl.gz', format: 'jsonl', compression: 'gzip' },
  { suffix: '.ndjson.gz', format: 'jsonl', compression: 'gzip' },
  { suffix: '.jsonl.zst', format: 'jsonl', compression: 'zstd' },
  { suffix: '.jsonl.zstd', format: 'jsonl', compression: 'zstd' },
  { suffix: '.ndjson.zst', format: 'jsonl', compression: 'zstd' },
  { suffix: '.json', format: 'json', compression: 'none' },
  { suffix: '.parquet', format: 'parquet', compression: 'none' },
];

export const SUPPORTED_SUFFIXES: readonly string[] = FORMATS.map((f) => f.suffix);

export function detectFormat(path: string): { format: FileFormat; compression: Compression } | undefined {
  const name = basename(path).toLowerCase();
  // Longest suffix first so ".jsonl.gz" is not mistaken for something ending in ".gz" alone.
  const match = [...FORMATS].sort((a, b) => b.suffix.length - a.suffix.length).find((f) => name.endsWith(f.suffix));
  return match && { format: match.format, compression: match.compression };
}

/** Hadoop/Spark convention: `_SUCCESS`, `_temporary/`, `.part-0.crc` are not data. */
function isHidden(name: string): boolean {
  return name.startsWith('.') || name.startsWith('_');
}

function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

async function walk(root: string, dir: string, out: FileEntry[]): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true });
  for (const e of entries) {
    if (isHidden(e.name)) continue;
    const full = join(dir, e.name);
    // Follow symlinks (datasets are often assembled from links) by stat-ing the target.
    const st = e.isSymbolicLink() ? await stat(full).catch(() => undefined) : undefined;
    if (e.isDirectory() || st?.isDirectory()) {
      await walk(root, full, out);
      continue;
    }
    const fmt = detectFormat(e.name);
    // .json only when named explicitly: folders hold dataset_info.json, state.json and the like.
    if (!fmt || fmt.format === 'json' || !(e.isFile() || st?.isFile())) continue;
    const bytes = st ? st.size : (await stat(full)).size;
    out.push({ path: full, unit: relative(root, full).split(sep).join('/'), ...fmt, bytes });
  }
}

/** Lists the files a path stands for; throws a clear error for a missing path or unknown type. */
export async function listInputFiles(inputPath: string): Promise<FileEntry[]> {
  const abs = resolve(inputPath);
  const st = await stat(abs).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') throw new Error(`input path does not exist: ${inputPath}`);
    throw new Error(`cannot access input path ${inputPath}: ${e.message}`);
  });
  if (st.isFile()) {
    const fmt = detectFormat(abs);
    if (!fmt) {
      throw new Error(`unsupported file type: ${inputPath} (expected one of ${SUPPORTED_SUFFIXES.join(', ')})`);
    }
    return [{ path: abs, unit: basename(abs), ...fmt, bytes: st.size }];
  }
  if (!st.isDirectory()) throw new Error(`input path is neither a file nor a folder: ${inputPath}`);
  const out: FileEntry[] = [];
  await walk(abs, abs, out);
  out.sort((a, b) => byCodeUnits(a.unit, b.unit));
  return out;
}

/** Reads the listed files in order; one-shot (iterate once). */
export class FileSource implements Source {
  readonly name: string;
  private readonly counter: ByteCounter = { bytesRead: 0 };
  private readonly opts: JsonlReadOptions;
  private items = 0;
  private iterator: AsyncGenerator<SourceItem> | undefined;
  private closed = false;

  constructor(
    inputPath: string,
    readonly files: readonly FileEntry[],
    options: FileSourceOptions = {},
  ) {
    this.name = `file:${resolve(inputPath)}`;
    this.opts = {
      sourceName: options.sourceName ?? 'file',
      maxLineBytes: options.maxLineBytes ?? 16 * 1024 * 1024,
      maxRawTextBytes: options.maxRawTextBytes ?? DEFAULT_MAX_RAW_TEXT_BYTES,
      maxJsonArrayBytes: options.maxJsonArrayBytes ?? 64 * 1024 * 1024,
      readChunkBytes: options.readChunkBytes ?? DEFAULT_READ_CHUNK_BYTES,
    };
  }

  [Symbol.asyncIterator](): AsyncGenerator<SourceItem> {
    if (this.iterator) throw new Error(`${this.name}: a source can be iterated only once`);
    this.iterator = this.run();
    return this.iterator;
  }

  private async *run(): AsyncGenerator<SourceItem> {
    for (const f of this.files) {
      if (this.closed) return;
      for await (const item of this.readFile(f)) {
        this.items++;
        yield item;
      }
    }
  }

  private readFile(f: FileEntry): AsyncGenerator<SourceItem> {
    if (f.format === 'parquet') return parquetItems(f, this.counter, this.opts);
    if (f.format === 'json') return readJsonFile(f.path, f.unit, this.counter, this.opts);
    return readJsonl(f.path, f.unit, f.compression, this.counter, this.opts);
  }

  /** totalBytes always; totalRows only when every file is Parquet (from footers). */
  async sizeHint(): Promise<SizeHint> {
    const totalBytes = this.files.reduce((n, f) => n + f.bytes, 0);
    if (this.files.length === 0 || this.files.some((f) => f.format !== 'parquet')) return { totalBytes };
    try {
      let totalRows = 0;
      const { parquetRowCount } = await import('./parquet-source.js');
      for (const f of this.files) totalRows += await parquetRowCount(f.path);
      return { totalRows, totalBytes };
    } catch {
      return { totalBytes }; // a broken footer shows up as a dead letter when read
    }
  }

  progress(): SourceProgress {
    return { items: this.items, bytesRead: this.counter.bytesRead };
  }

  async close(): Promise<void> {
    this.closed = true;
    // Runs the generators' finally blocks, which close file handles and streams.
    await this.iterator?.return(undefined);
  }
}

/** Opens a file or folder as a Source. Throws for a missing path or unsupported file type. */
export async function openFileSource(inputPath: string, options: FileSourceOptions = {}): Promise<FileSource> {
  return new FileSource(inputPath, await listInputFiles(inputPath), options);
}

// The Parquet reader (hyparquet and its codecs) loads only when a Parquet file is read.
async function* parquetItems(f: FileEntry, counter: ByteCounter, opts: Parameters<typeof import('./parquet-source.js').readParquet>[3]): AsyncGenerator<SourceItem> {
  const { readParquet } = await import('./parquet-source.js');
  yield* readParquet(f.path, f.unit, counter, opts);
}
