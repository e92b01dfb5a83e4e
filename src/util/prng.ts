import { createHash } from 'node:crypto';

/**
 * Seeded randomness for the simulator. A stream is named by a list of parts (profile seed,
 * model, request seed, task, record key, ...); the parts are hashed, so any change in any part
 * gives an unrelated stream and identical parts always give the identical stream.
 */
export interface Rng {
  /** uniform in [0, 1) */
  next(): number;
  /** true with probability p */
  chance(p: number): boolean;
  /** integer in [lo, hi] */
  int(lo: number, hi: number): number;
  pick<T>(items: readonly T[]): T;
  /** standard normal (Box-Muller) */
  normal(): number;
}

export function streamSeed(parts: readonly (string | number | undefined | null)[]): Uint32Array {
  const h = createHash('sha256');
  // Length-prefixed parts so ("ab","c") and ("a","bc") differ.
  for (const p of parts) {
    const s = p === undefined || p === null ? '\u0000none' : String(p);
    h.update(`${s.length}:${s};`);
  }
  const d = h.digest();
  return new Uint32Array([d.readUInt32LE(0), d.readUInt32LE(4), d.readUInt32LE(8), d.readUInt32LE(12)]);
}

/** sfc32: small, fast, good enough statistically for simulation, and seedable with 128 bits. */
export function createRng(parts: readonly (string | number | undefined | null)[]): Rng {
  const s = streamSeed(parts);
  let a = s[0]!, b = s[1]!, c = s[2]!, d = s[3]! | 1;
  const raw = (): number => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 12; i++) raw(); // warm up: the first outputs of sfc32 are weakly mixed
  const rng: Rng = {
    next: raw,
    chance: (p) => p > 0 && raw() < p,
    int: (lo, hi) => lo + Math.floor(raw() * (hi - lo + 1)),
    pick: (items) => {
      if (items.length === 0) throw new Error('pick from an empty list');
      return items[Math.floor(raw() * items.length)]!;
    },
    normal: () => {
      const u = 1 - raw(); // (0, 1]: log(0) is -Infinity
      return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * raw());
    },
  };
  return rng;
}

/** Draw a key of `weights` with probability proportional to its weight. */
export function weighted<K extends string>(rng: Rng, weights: Readonly<Record<K, number>>): K {
  const keys = Object.keys(weights) as K[];
  const total = keys.reduce((s, k) => s + weights[k], 0);
  let u = rng.next() * total;
  for (const k of keys) {
    u -= weights[k];
    if (u < 0) return k;
  }
  return keys[keys.length - 1]!;
}
