/**
 * `juryStream`: a Node Duplex in object mode over a jury (./jury.ts). Records written in are
 * judged `concurrency` at once; results come out in input order or as they finish. A record is
 * "in flight" from the write that brings it until its result is handed to the reader, and the
 * stream never holds more than `concurrency` of them: a slow reader stops the judging, which
 * withholds the write callback, which fills the writable buffer, so the writer's `write()`
 * returns false and `pipeline` pauses the source. Memory stays bounded by concurrency plus the
 * two high-water marks, whatever the source's size.
 *
 * A record that cannot be judged comes out as a DeadLetterResult; the stream errors only for
 * what stops a run (an endpoint fault waiting cannot heal, an outage past max_outage_ms), with
 * that typed error. While an endpoint is down (and may come back) no new record starts.
 */
import { Duplex } from 'node:stream';
import { DuplicateIds } from '../pipeline/duplicate-ids.js';
import type { Dead, Derived } from '../pipeline/envelope.js';
import { createJury } from './jury.js';
import { coreOf, judgementOf, type JuryCore } from './jury-core.js';
import type { Jury, JuryStream, JuryStreamOptions, StreamResult } from './types.js';

const DEFAULT_CONCURRENCY = 8;

class JudgingStream extends Duplex implements JuryStream {
  private core: JuryCore | undefined;
  private jury: Jury | undefined;
  private readonly concurrency: number;
  private readonly ordered: boolean;
  private nextIndex = 0;
  private nextOut = 0;
  /** finished results not yet pushed: by index when ordered, in finishing order when not */
  private readonly finished = new Map<number, StreamResult>();
  private readonly queue: StreamResult[] = [];
  private held = 0;
  private peak = 0;
  private wantRead = false;
  private writeDone: (() => void) | null = null;
  private finalDone: (() => void) | null = null;
  private readonly stopped = new AbortController();
  /** the ids this stream has seen: what `input.duplicate_ids` is applied against (set once the jury is open) */
  private seen: DuplicateIds | undefined;

  constructor(private readonly options: JuryStreamOptions) {
    super({ objectMode: true, allowHalfOpen: true, writableHighWaterMark: options.writableHighWaterMark ?? 1, readableHighWaterMark: options.readableHighWaterMark ?? 1 });
    const n = options.concurrency ?? DEFAULT_CONCURRENCY;
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`juryStream: concurrency must be a positive integer (got ${String(n)})`);
    if ((options.jury === undefined) === (options.config === undefined)) throw new TypeError('juryStream: give either `config` or `jury`');
    this.concurrency = n;
    this.ordered = options.ordered ?? true;
    if (options.jury) [this.jury, this.core] = [options.jury, coreOf(options.jury)];
  }

  get inFlight(): number {
    return this.held;
  }

  get maxInFlight(): number {
    return this.peak;
  }

  override _construct(callback: (error?: Error | null) => void): void {
    if (this.core || !this.options.config) return callback();
    createJury(this.options.config, this.options.simulatorGold !== undefined ? { simulatorGold: this.options.simulatorGold } : {}).then(
      (jury) => {
        [this.jury, this.core] = [jury, coreOf(jury)];
        callback();
      },
      (err: Error) => callback(err),
    );
  }

  override _write(record: unknown, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    const index = this.nextIndex++;
    this.held++;
    this.peak = Math.max(this.peak, this.held);
    void this.judge(record, index);
    if (this.held < this.concurrency) callback();
    else this.writeDone = callback;
  }

  private async judge(record: unknown, index: number): Promise<void> {
    const core = this.core!;
    try {
      await core.whenOpen(this.stopped.signal);
      if (this.destroyed) return;
      this.seen ??= new DuplicateIds(core.duplicateIds);
      this.settle(resultOf(record, index, await core.run(record, index, this.seen)));
    } catch (err) {
      this.destroy(err as Error);
    }
  }

  private settle(result: StreamResult): void {
    if (this.destroyed) return;
    if (this.ordered) this.finished.set(result.index, result);
    else this.queue.push(result);
    this.flush();
  }

  private nextResult(): StreamResult | undefined {
    if (!this.ordered) return this.queue.shift();
    const r = this.finished.get(this.nextOut);
    if (r === undefined) return undefined;
    this.finished.delete(this.nextOut++);
    return r;
  }

  /** Hands results to the reader while it wants them; frees write slots as they go. */
  private flush(): void {
    while (this.wantRead) {
      const r = this.nextResult();
      if (r === undefined) break;
      this.held--;
      this.wantRead = this.push(r);
    }
    if (this.writeDone && this.held < this.concurrency) {
      const done = this.writeDone;
      this.writeDone = null;
      done();
    }
    if (this.finalDone && this.held === 0) {
      this.push(null);
      const done = this.finalDone;
      this.finalDone = null;
      done();
    }
  }

  override _read(): void {
    this.wantRead = true;
    this.flush();
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.finalDone = () => callback();
    this.flush();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.stopped.abort();
    const owned = this.options.config !== undefined ? this.jury : undefined;
    if (!owned) return callback(error);
    owned.close().then(
      () => callback(error),
      (err: Error) => callback(error ?? err),
    );
  }
}

function resultOf(record: unknown, index: number, env: Derived | Dead): StreamResult {
  if (env.dead) return { ok: false, record, index, reason: env.dead.error, deadLetter: env.dead };
  return { ok: true, record, index, ...judgementOf(env) };
}

/**
 * A Duplex in object mode: trace records in, StreamResult out. Use it in `stream.pipeline`, with
 * `for await` over it, or as a Web stream pair through `Duplex.toWeb(stream)`.
 */
export function juryStream(options: JuryStreamOptions): JuryStream {
  return new JudgingStream(options);
}
