/**
 * File → (decompressed) byte chunks, pulled on demand.
 *
 * gzip uses node:zlib. zstd uses fzstd's streaming `Decompress`: node:zlib has zstd only from
 * Node 22.15 and marks it experimental, and hyparquet-compressors only exposes fzstd's one-shot
 * `decompress` (whole input in memory). fzstd is pure JS, MIT, the decompressor
 * hyparquet-compressors itself pins, and handles multi-frame files; every supported Node line
 * uses it, so they all behave identically.
 */
import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { Decompress } from 'fzstd';

export type Compression = 'none' | 'gzip' | 'zstd';

/** Shared counter so a source can report how many stored bytes it has pulled. */
export interface ByteCounter {
  bytesRead: number;
}

export const DEFAULT_READ_CHUNK_BYTES = 64 * 1024;
/**
 * zstd input is fed in slices this big: fzstd decodes every complete block of a push
 * synchronously, so the slice bounds how much output one step can produce (compression bombs).
 */
const ZSTD_INPUT_SLICE = 16 * 1024;

async function* fileChunks(path: string, counter: ByteCounter, chunkBytes: number): AsyncGenerator<Uint8Array> {
  const stream = createReadStream(path, { highWaterMark: chunkBytes });
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      counter.bytesRead += chunk.length;
      yield chunk;
    }
  } finally {
    stream.destroy();
  }
}

async function* gunzipChunks(src: AsyncGenerator<Uint8Array>, chunkBytes: number): AsyncGenerator<Uint8Array> {
  const gunzip = createGunzip({ chunkSize: chunkBytes });
  // pipeline propagates source errors into gunzip (and so into our loop) and keeps backpressure.
  pipeline(src, gunzip, () => {});
  try {
    for await (const chunk of gunzip as AsyncIterable<Buffer>) yield chunk;
  } catch (e) {
    // zlib errors carry Z_* codes; I/O errors from the file pass through unchanged.
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && code.startsWith('Z_')) throw new Error(`gzip: ${(e as Error).message}`);
    throw e;
  } finally {
    gunzip.destroy();
    await src.return(undefined);
  }
}

async function* unzstdChunks(src: AsyncGenerator<Uint8Array>): AsyncGenerator<Uint8Array> {
  const out: Uint8Array[] = [];
  const d = new Decompress((block) => {
    if (block.length > 0) out.push(block);
  });
  try {
    for await (const chunk of src) {
      for (let i = 0; i < chunk.length; i += ZSTD_INPUT_SLICE) {
        d.push(chunk.subarray(i, i + ZSTD_INPUT_SLICE));
        while (out.length > 0) yield out.shift()!;
      }
    }
    d.push(new Uint8Array(0), true);
    while (out.length > 0) yield out.shift()!;
  } catch (e) {
    throw new Error(`zstd: ${zstdMessage(e)}`);
  } finally {
    await src.return(undefined);
  }
}

const ZSTD_ERRORS = [
  'invalid data',
  'window size too large',
  'invalid block type',
  'FSE accuracy too high',
  'match distance too far back',
  'unexpected end of file (truncated?)',
];

function zstdMessage(e: unknown): string {
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'number' && ZSTD_ERRORS[code]) return ZSTD_ERRORS[code]!;
  return e instanceof Error ? e.message : String(e);
}

/** Decompressed byte chunks of a file; errors (I/O, corrupt or truncated data) are thrown. */
export function readFileBytes(
  path: string,
  compression: Compression,
  counter: ByteCounter,
  chunkBytes = DEFAULT_READ_CHUNK_BYTES,
): AsyncGenerator<Uint8Array> {
  const raw = fileChunks(path, counter, chunkBytes);
  if (compression === 'gzip') return gunzipChunks(raw, chunkBytes);
  if (compression === 'zstd') return unzstdChunks(raw);
  return raw;
}
