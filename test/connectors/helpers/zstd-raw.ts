/**
 * A minimal zstd *writer* for tests: valid frames made of raw (stored) blocks. It exercises the
 * frame/block parsing of the streaming decompressor without needing a compressor; real
 * compressed data comes from Python (pyarrow.compress) in the Python-gated tests.
 */
const MAGIC = [0x28, 0xb5, 0x2f, 0xfd];
const BLOCK_MAX = 128 * 1024;

export function zstdRawFrame(data: Uint8Array, blockBytes = BLOCK_MAX): Uint8Array {
  const parts: Uint8Array[] = [];
  // Frame header: descriptor 0x00 (no content size, not single-segment, no checksum, no dict),
  // window descriptor 0x38 → 2^(10+7) = 128 KB window.
  parts.push(Uint8Array.from([...MAGIC, 0x00, 0x38]));
  const size = Math.min(blockBytes, BLOCK_MAX);
  let at = 0;
  do {
    const chunk = data.subarray(at, at + size);
    at += chunk.length;
    const last = at >= data.length ? 1 : 0;
    const header = (chunk.length << 3) | (0 << 1) | last; // type 0 = raw block
    parts.push(Uint8Array.of(header & 0xff, (header >> 8) & 0xff, (header >> 16) & 0xff), chunk);
  } while (at < data.length);
  return Buffer.concat(parts);
}
