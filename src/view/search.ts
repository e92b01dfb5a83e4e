/**
 * Text search over problem and trace: a scan of the corpus parts, one range at a time (a million
 * traces do not fit the memory budget), case-insensitive substring. The last answers are kept.
 */
import type { ObjectStore } from '../pipeline/storage/object-store.js';
import { eachCorpusRecord, recordFields, traceParts } from './record-detail.js';
import type { RecordIndex } from './record-index.js';

function haystack(raw: unknown): string {
  const o = recordFields(raw);
  if (!o) return typeof raw === 'string' ? raw.toLowerCase() : '';
  const p = traceParts(o);
  return `${p.problem ?? ''}\n${p.trace ?? ''}\n${(p.steps ?? []).join('\n')}`.toLowerCase();
}

export class TraceSearch {
  private readonly recent = new Map<string, Uint8Array>();
  constructor(
    private readonly store: ObjectStore,
    private readonly ix: RecordIndex,
  ) {}

  /** One byte per record: 1 where the id, problem or trace holds `q`. */
  async hits(q: string): Promise<Uint8Array> {
    const needle = q.toLowerCase();
    const key = `${needle}#${this.ix.ready}`;
    const had = this.recent.get(key);
    if (had) return had;
    const ix = this.ix;
    const hits = new Uint8Array(ix.ready);
    for (let r = 0; r < ix.manifests.length; r++) {
      const start = ix.starts[r]!;
      const end = ix.starts[r + 1] ?? ix.ready;
      const at = new Map<string, number>();
      for (let i = start; i < end; i++) {
        if (ix.ids[i]!.toLowerCase().includes(needle)) hits[i] = 1;
        if (!at.has(ix.ids[i]!)) at.set(ix.ids[i]!, i);
      }
      await eachCorpusRecord(this.store, ix.manifests[r]!, (id, raw) => {
        const i = at.get(id);
        if (i !== undefined && !hits[i] && haystack(raw).includes(needle)) hits[i] = 1;
      });
    }
    this.recent.set(key, hits);
    if (this.recent.size > 4) this.recent.delete(this.recent.keys().next().value!);
    return hits;
  }
}
