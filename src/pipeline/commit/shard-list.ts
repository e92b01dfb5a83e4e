/**
 * What a reader may read: the files listed in the output's commit manifests, and a check that
 * each of them is there with the size and sha256 its manifest recorded (`shards list|verify`).
 *
 * Everything here goes by manifests, never by globbing part files: a range whose write failed
 * half-way has parts but no manifest, and a range re-judged after its input changed had its
 * old manifest removed first (../input-identity.ts), so neither is ever listed.
 */
import { CommitManifest, type FileFormat, type ManifestTableName } from '../../../schemas/outputs.js';
import { COMMITS_PREFIX } from './layout.js';
import type { ObjectStore } from '../storage/object-store.js';
import { filesChecksum, manifestSeal, sha256Hex } from './checksum.js';

export interface CommittedFile {
  table: ManifestTableName;
  format: FileFormat;
  /** key under the output root */
  key: string;
  /** local path or s3:// URL, as a reader opens it */
  location: string;
  rows: number;
  bytes: number;
  sha256: string;
  /** `<first>..<last>`: the range whose manifest lists the file */
  range: string;
  manifest: string;
}

export interface FileFilter {
  tables?: readonly ManifestTableName[];
  formats?: readonly FileFormat[];
}

const manifestKeys = async (store: ObjectStore): Promise<string[]> => (await store.list(COMMITS_PREFIX)).filter((k) => k.endsWith('.json'));

function parse(bytes: Uint8Array, key: string): CommitManifest {
  return parseRaw(bytes, key).manifest;
}

/** The manifest, and the JSON object as stored: the seal is checked over what was written. */
function parseRaw(bytes: Uint8Array, key: string): { manifest: CommitManifest; raw: object } {
  try {
    const raw = JSON.parse(new TextDecoder().decode(bytes)) as object;
    return { manifest: CommitManifest.parse(raw), raw };
  } catch (e) {
    throw new Error(`corrupt commit manifest ${key}: ${(e as Error).message.split('\n')[0]}`);
  }
}

/** Every committed file in manifest order (then key order within a range). A corrupt manifest throws. */
export async function committedFiles(store: ObjectStore, filter: FileFilter = {}): Promise<CommittedFile[]> {
  const out: CommittedFile[] = [];
  for (const mkey of await manifestKeys(store)) {
    const bytes = await store.get(mkey);
    if (!bytes) continue; // removed between list and get (a re-judge retracting it)
    const m = parse(bytes, mkey);
    for (const f of m.files) {
      if (filter.tables && !filter.tables.includes(f.table)) continue;
      if (filter.formats && !filter.formats.includes(f.format)) continue;
      out.push({ table: f.table, format: f.format, key: f.key, location: store.locate(f.key), rows: f.rows, bytes: f.bytes, sha256: f.sha256, range: `${m.first}..${m.last}`, manifest: mkey });
    }
  }
  return out;
}

export interface VerifyReport {
  manifests: number;
  files: number;
  /** manifests written before manifests were sealed: their rows, usage and settings are not covered */
  unsealed: number;
  /** one line per problem, naming the file (or manifest) and what is wrong */
  problems: string[];
}

/** Re-reads every committed file and compares it with its manifest; a corrupt manifest is a problem, not a crash. */
export async function verifyOutput(store: ObjectStore, filter: FileFilter = {}): Promise<VerifyReport> {
  const report: VerifyReport = { manifests: 0, files: 0, unsealed: 0, problems: [] };
  for (const mkey of await manifestKeys(store)) {
    const bytes = await store.get(mkey);
    if (!bytes) continue;
    let m: CommitManifest;
    let raw: object;
    try {
      ({ manifest: m, raw } = parseRaw(bytes, mkey));
    } catch (e) {
      report.problems.push(`${store.locate(mkey)}: ${(e as Error).message}`);
      continue;
    }
    report.manifests += 1;
    if (filesChecksum(m.files) !== m.checksum) report.problems.push(`${store.locate(mkey)}: checksum over its file list differs from the one it records (manifest edited?)`);
    if (m.seal === undefined) report.unsealed += 1;
    else if (manifestSeal(raw) !== m.seal) report.problems.push(`${store.locate(mkey)}: its seal does not match its fields (rows, record_ids, range, usage, settings or files edited after the commit)`);
    for (const f of m.files) {
      if (filter.tables && !filter.tables.includes(f.table)) continue;
      if (filter.formats && !filter.formats.includes(f.format)) continue;
      report.files += 1;
      const problem = await checkFile(store, f);
      if (problem) report.problems.push(`${store.locate(f.key)}: ${problem} (range ${m.first}..${m.last})`);
    }
  }
  return report;
}

async function checkFile(store: ObjectStore, f: CommitManifest['files'][number]): Promise<string | null> {
  const got = await store.get(f.key);
  if (!got) return 'missing';
  if (got.byteLength !== f.bytes) return `size ${got.byteLength} bytes, manifest says ${f.bytes}`;
  const sha = sha256Hex(got);
  if (sha !== f.sha256) return `sha256 ${sha.slice(0, 12)}…, manifest says ${f.sha256.slice(0, 12)}…`;
  return null;
}
