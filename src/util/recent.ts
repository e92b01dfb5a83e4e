/**
 * "Have I seen this key lately?" in bounded memory, for long or endless streams. Two generations:
 * when the young one fills, it becomes the old one and the previous old one is dropped. Keys
 * that matter together (a record's calls, a request's retries) arrive close in time, so the
 * answers stay exact in practice while memory never exceeds 2 * capacity entries.
 */
export class RecentMap<V> {
  private young = new Map<string, V>();
  private old = new Map<string, V>();

  constructor(private readonly capacity = 50_000) {}

  get(key: string): V | undefined {
    return this.young.get(key) ?? this.old.get(key);
  }

  has(key: string): boolean {
    return this.young.has(key) || this.old.has(key);
  }

  set(key: string, value: V): void {
    this.old.delete(key);
    this.young.set(key, value);
    if (this.young.size >= this.capacity) {
      this.old = this.young;
      this.young = new Map();
    }
  }
}
