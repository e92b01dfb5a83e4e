import { inflateSync } from 'node:zlib';

/**
 * Minimal PNG reader for screenshot checks: 8-bit RGB or RGBA, not interlaced (what Chromium
 * writes). Returns the pixels as RGBA.
 */
export interface Image {
  width: number;
  height: number;
  rgba: Uint8Array;
}

export function decodePng(buf: Buffer): Image {
  if (buf.readUInt32BE(0) !== 0x89504e47) throw new Error('not a PNG');
  let pos = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Buffer[] = [];
  while (pos < buf.length) {
    const len = buf.readUInt32BE(pos);
    const type = buf.toString('ascii', pos + 4, pos + 8);
    const data = buf.subarray(pos + 8, pos + 8 + len);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      const depth = data[8]!;
      const color = data[9]!;
      if (depth !== 8 || (color !== 2 && color !== 6) || data[12] !== 0) throw new Error(`unsupported PNG: depth ${depth}, color type ${color}, interlace ${data[12]}`);
      channels = color === 6 ? 4 : 3;
    } else if (type === 'IDAT') idat.push(data);
    else if (type === 'IEND') break;
    pos += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const out = new Uint8Array(width * height * 4);
  let prev = new Uint8Array(stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const cur = new Uint8Array(stride);
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? cur[x - channels]! : 0;
      const b = prev[x]!;
      const c = x >= channels ? prev[x - channels]! : 0;
      let p: number;
      if (filter === 0) p = 0;
      else if (filter === 1) p = a;
      else if (filter === 2) p = b;
      else if (filter === 3) p = (a + b) >> 1;
      else {
        const pa = Math.abs(b - c);
        const pb = Math.abs(a - c);
        const pc = Math.abs(a + b - 2 * c);
        p = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      cur[x] = (line[x]! + p) & 0xff;
    }
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 4;
      out[o] = cur[x * channels]!;
      out[o + 1] = cur[x * channels + 1]!;
      out[o + 2] = cur[x * channels + 2]!;
      out[o + 3] = channels === 4 ? cur[x * channels + 3]! : 255;
    }
    prev = cur;
  }
  return { width, height, rgba: out };
}

/** Share of pixels that are not (near) white. */
export function inkShare(img: Image): number {
  let ink = 0;
  for (let i = 0; i < img.rgba.length; i += 4) if (img.rgba[i]! < 235 || img.rgba[i + 1]! < 235 || img.rgba[i + 2]! < 235) ink++;
  return ink / (img.width * img.height);
}

/** Pixels within `tol` of the colour "#rrggbb". */
export function countColor(img: Image, hex: string, tol = 12): number {
  const r = parseInt(hex.slice(1, 3), 16);
  const g = parseInt(hex.slice(3, 5), 16);
  const b = parseInt(hex.slice(5, 7), 16);
  let n = 0;
  for (let i = 0; i < img.rgba.length; i += 4) {
    if (Math.abs(img.rgba[i]! - r) <= tol && Math.abs(img.rgba[i + 1]! - g) <= tol && Math.abs(img.rgba[i + 2]! - b) <= tol) n++;
  }
  return n;
}
