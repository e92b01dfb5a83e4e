/**
 * Byte-level line splitting with a hard per-line cap.
 *
 * Works on bytes, not strings, so invalid UTF-8 in one line cannot corrupt its neighbours and
 * an over-long line is discarded as it streams past (only a short head is kept for the dead
 * letter) instead of being buffered whole.
 */

export type Line =
  | { lineNo: number; bytes: Uint8Array; tooLong?: undefined }
  /** `head` is the first `keepBytes` bytes; `totalBytes` the full length without the newline. */
  | { lineNo: number; tooLong: { head: Uint8Array; totalBytes: number }; bytes?: undefined };

const LF = 0x0a;
const CR = 0x0d;

function concat(parts: Uint8Array[], total: number): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * Push chunks, get complete lines. Line numbers count physical lines (every LF), 0-based, so a
 * line's number is the same whether or not blank lines around it are skipped later.
 * A trailing CR (CRLF files) is stripped; a final line without LF is returned by `end()`.
 */
export class LineSplitter {
  private parts: Uint8Array[] = [];
  private partBytes = 0; // bytes kept in `parts`
  private lineBytes = 0; // bytes of the current line seen so far (kept or not)
  private nextLine = 0;

  constructor(
    private readonly maxLineBytes: number,
    private readonly keepBytes: number,
  ) {}

  /** Number of the line currently being assembled (= lines completed so far). */
  get currentLineNo(): number {
    return this.nextLine;
  }

  /** Bytes of the unfinished line seen so far (for a dead letter when the stream breaks). */
  pendingHead(): Uint8Array {
    return concat(this.parts, this.partBytes);
  }

  get pendingBytes(): number {
    return this.lineBytes;
  }

  push(chunk: Uint8Array): Line[] {
    const out: Line[] = [];
    let start = 0;
    while (start <= chunk.length) {
      const nl = chunk.indexOf(LF, start);
      const end = nl < 0 ? chunk.length : nl;
      this.append(chunk.subarray(start, end));
      if (nl < 0) break;
      out.push(this.finish());
      start = nl + 1;
    }
    return out;
  }

  /** Flushes a final unterminated line, if any. */
  end(): Line | undefined {
    if (this.lineBytes === 0) return undefined;
    return this.finish();
  }

  private append(piece: Uint8Array): void {
    if (piece.length === 0) return;
    this.lineBytes += piece.length;
    const tooLong = this.lineBytes > this.maxLineBytes;
    // Within the limit keep everything; past it keep only the head for the dead letter.
    const room = tooLong ? this.keepBytes - this.partBytes : piece.length;
    if (room <= 0) {
      if (tooLong && this.partBytes > this.keepBytes) this.trimToKeep();
      return;
    }
    const kept = room >= piece.length ? piece : piece.subarray(0, room);
    // Copy: chunk buffers may be reused by the stream once we return.
    this.parts.push(kept.slice());
    this.partBytes += kept.length;
    if (tooLong && this.partBytes > this.keepBytes) this.trimToKeep();
  }

  /** Crossing the limit: drop everything past the head we keep. */
  private trimToKeep(): void {
    const head = concat(this.parts, this.partBytes).slice(0, this.keepBytes);
    this.parts = [head];
    this.partBytes = head.length;
  }

  private finish(): Line {
    const lineNo = this.nextLine++;
    const total = this.lineBytes;
    let bytes = concat(this.parts, this.partBytes);
    this.parts = [];
    this.partBytes = 0;
    this.lineBytes = 0;
    if (total > this.maxLineBytes) {
      return { lineNo, tooLong: { head: bytes, totalBytes: total } };
    }
    if (bytes.length > 0 && bytes[bytes.length - 1] === CR) bytes = bytes.subarray(0, bytes.length - 1);
    return { lineNo, bytes };
  }
}
