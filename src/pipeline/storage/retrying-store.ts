/**
 * An ObjectStore whose every operation rides out storage outages (./storage-retry.ts) and fails
 * for good as a StorageError naming the key and where it is. The stage's committer, the resume
 * reads and the Kafka clearance all go through it, so none of them dies on a store that is
 * merely down for a while.
 */
import { ObjectExistsError, OutputGoneError, type ObjectStore } from './object-store.js';
import type { StorageOp } from './storage-error.js';
import type { StorageRetry } from './storage-retry.js';

// A taken key is an answer; a vanished output folder is final and says so itself.
const isAnswer = (err: unknown) => err instanceof ObjectExistsError || err instanceof OutputGoneError;

export function retryingStore(store: ObjectStore, retry: StorageRetry, storeName: string): ObjectStore {
  const where = (key: string): string => {
    try {
      return store.locate(key);
    } catch {
      return `${storeName.replace(/\/+$/, '')}/${key}`; // a prefix ('', '_commits/') is no key
    }
  };
  const transient = (err: unknown) => store.isTransient?.(err) ?? false;
  const run = <T>(op: StorageOp, key: string, fn: () => Promise<T>): Promise<T> => retry.run({ op, key, location: where(key), transient, passThrough: isAnswer }, fn);
  const wrapped: ObjectStore = {
    putObject: (key, bytes) => run('write', key, () => store.putObject(key, bytes)),
    exists: (key) => run('check', key, () => store.exists(key)),
    get: (key) => run('read', key, () => store.get(key)),
    list: (prefix) => run('list', prefix, () => store.list(prefix)),
    locate: (key) => store.locate(key),
    isTransient: transient,
  };
  const create = store.createObject?.bind(store);
  if (create) wrapped.createObject = (key, bytes) => run('write', key, () => create(key, bytes));
  const move = store.move?.bind(store);
  if (move) wrapped.move = (from, to) => run('write', to, () => move(from, to));
  const del = store.delete?.bind(store);
  if (del) wrapped.delete = (key) => run('write', key, () => del(key));
  const listAfter = store.listAfter?.bind(store);
  if (listAfter) wrapped.listAfter = (prefix, startAfter) => run('list', prefix, () => listAfter(prefix, startAfter));
  return wrapped;
}
