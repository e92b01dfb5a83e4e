/**
 * JSONL (plain, .gz, .zst) → SourceItems, one per non-blank physical line.
 *
 * Offsets are 0-based physical line numbers: blank lines are skipped but still counted, so an
 * offset always points at the same line of the file (`sed -n "$((offset+1))p"`), and a resumed
 * read lands on the same numbering.
 */
import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import type { SourcePosition } from '../../schemas/trace.js';
import {
  deadItem,
  formatLimit,
  formatSize,
  rawTextFromBytes,
  rawTextFromValue,
  type SourceItem,
} from '../../src/pipeline/source.js';
import { readFileBytes, type ByteCounter, type Compression } from './byte-stream.js';
import { LineSplitter, type Line } from './lines.js';

export interface JsonlReadOptions {
  /** Value of position.source. */
  sourceName: string;
  /** Lines longer than this many (decompressed) bytes become dead letters. */
  maxLineBytes: number;
  /** Cap of dead-letter rawText, in bytes. */
  maxRawTextBytes: number;
  /** `.json` files holding one top-level array are parsed whole, up to this size. */
  maxJsonArrayBytes: number;
  readChunkBytes: number;
}

const fatalDecoder = new TextDecoder('utf-8', { fatal: true });

function isBlank(bytes: Uint8Array): boolean {
  for (const b of bytes) {
    if (b !== 0x20 && b !== 0x09 && b !== 0x0d) return false;
  }
  return true;
}

function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Bytes of one complete value → parsed object or the reason it is not one. */
export function parseJsonObject(bytes: Uint8Array): { ok: true; raw: object } | { ok: false; error: string } {
  let text: string;
  try {
    text = fatalDecoder.decode(bytes);
  } catch {
    return { ok: false, error: 'invalid UTF-8' };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { ok: false, error: `invalid JSON: ${errorMessage(e)}` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, error: `not a JSON object (got ${kindOf(value)})` };
  }
  return { ok: true, raw: value };
}

function lineToItem(line: Line, pos: (offset: number) => SourcePosition, opts: Pick<JsonlReadOptions, 'maxLineBytes' | 'maxRawTextBytes'>): SourceItem | undefined {
  if (line.tooLong) {
    const { head, totalBytes } = line.tooLong;
    return deadItem(
      pos(line.lineNo),
      `line is ${formatSize(totalBytes)}, over the ${formatLimit(opts.maxLineBytes)} line limit`,
      rawTextFromBytes(head, opts.maxRawTextBytes, true),
    );
  }
  if (isBlank(line.bytes)) return undefined;
  // The line's own bytes are its identity (src/pipeline/input-identity.ts): hashing them here is
  // cheaper than re-serialising the parsed value, and sees every byte.
  const digest = createHash('sha256').update(line.bytes).digest('base64');
  const parsed = parseJsonObject(line.bytes);
  if (parsed.ok) return { position: pos(line.lineNo), ok: true, raw: parsed.raw, digest };
  return { ...deadItem(pos(line.lineNo), parsed.error, rawTextFromBytes(line.bytes, opts.maxRawTextBytes)), digest };
}

/**
 * Streams a JSONL file. A stream failure (I/O error, corrupt or truncated compression) ends the
 * file with one dead letter at the line being read, carrying the partial line.
 */
export function readJsonl(
  path: string,
  unit: string,
  compression: Compression,
  counter: ByteCounter,
  opts: JsonlReadOptions,
): AsyncGenerator<SourceItem> {
  return readJsonlBytes(readFileBytes(path, compression, counter, opts.readChunkBytes), unit, opts);
}

/** JSONL from any byte stream (a file, stdin): one item per non-blank line, a stream failure as the last dead letter. */
export async function* readJsonlBytes(bytes: AsyncGenerator<Uint8Array>, unit: string, opts: Pick<JsonlReadOptions, 'sourceName' | 'maxLineBytes' | 'maxRawTextBytes'>): AsyncGenerator<SourceItem> {
  const pos = (offset: number): SourcePosition => ({ source: opts.sourceName, unit, offset });
  const splitter = new LineSplitter(opts.maxLineBytes, opts.maxRawTextBytes);
  let failure: unknown;
  try {
    for await (const chunk of bytes) {
      for (const line of splitter.push(chunk)) {
        const item = lineToItem(line, pos, opts);
        if (item) yield item;
      }
    }
  } catch (e) {
    failure = e;
  } finally {
    await bytes.return(undefined);
  }
  if (failure !== undefined) {
    const head = splitter.pendingHead();
    const truncated = splitter.pendingBytes > head.length;
    yield deadItem(
      pos(splitter.currentLineNo),
      `read failed at line ${splitter.currentLineNo}: ${errorMessage(failure)}`,
      rawTextFromBytes(head, opts.maxRawTextBytes, truncated),
    );
    return;
  }
  const last = splitter.end();
  if (last) {
    const item = lineToItem(last, pos, opts);
    if (item) yield item;
  }
}

/**
 * `.json`: a top-level array is parsed whole (bounded by maxJsonArrayBytes) and each element
 * gets its array index as offset; anything else is read as JSONL, since many datasets ship
 * JSON Lines under a .json name.
 */
export async function* readJsonFile(
  path: string,
  unit: string,
  counter: ByteCounter,
  opts: JsonlReadOptions,
): AsyncGenerator<SourceItem> {
  const pos = (offset: number): SourcePosition => ({ source: opts.sourceName, unit, offset });
  let arrayBytes: Uint8Array | undefined;
  try {
    const fh = await open(path, 'r');
    try {
      const { size } = await fh.stat();
      const probe = new Uint8Array(Math.min(size, 4096));
      const { bytesRead } = await fh.read(probe, 0, probe.length, 0);
      const first = firstSignificantByte(probe.subarray(0, bytesRead));
      if (first === 0x5b /* [ */) {
        if (size > opts.maxJsonArrayBytes) {
          yield deadItem(
            pos(0),
            `JSON array file is ${formatSize(size)}, over the ${formatLimit(opts.maxJsonArrayBytes)} limit; convert it to JSONL (jq -c '.[]')`,
            rawTextFromBytes(probe.subarray(0, bytesRead), opts.maxRawTextBytes, bytesRead < size),
          );
          return;
        }
        arrayBytes = await fh.readFile();
        counter.bytesRead += arrayBytes.length;
      }
    } finally {
      await fh.close();
    }
  } catch (e) {
    yield deadItem(pos(0), `read failed: ${errorMessage(e)}`, { rawText: '', rawTextTruncated: false });
    return;
  }
  if (!arrayBytes) {
    yield* readJsonl(path, unit, 'none', counter, opts);
    return;
  }
  let values: unknown;
  try {
    values = JSON.parse(fatalDecoder.decode(arrayBytes));
  } catch (e) {
    const reason = e instanceof SyntaxError ? `invalid JSON: ${e.message}` : 'invalid UTF-8';
    yield deadItem(pos(0), reason, rawTextFromBytes(arrayBytes, opts.maxRawTextBytes));
    return;
  }
  arrayBytes = undefined; // let the bytes go; only the parsed values are needed now
  const list = values as unknown[];
  for (let i = 0; i < list.length; i++) {
    const v = list[i];
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      yield { position: pos(i), ok: true, raw: v };
    } else {
      yield deadItem(pos(i), `not a JSON object (got ${kindOf(v)})`, rawTextFromValue(v, opts.maxRawTextBytes));
    }
  }
}

function firstSignificantByte(bytes: Uint8Array): number | undefined {
  let i = 0;
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) i = 3; // UTF-8 BOM
  for (; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b !== 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d) return b;
  }
  return undefined;
}
