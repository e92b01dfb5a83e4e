/**
 * Phase 1 admission: a record starts its Phase 1 fan-out only when the endpoints its jurors sit
 * on can take those calls soon. Without it, `--concurrency 16` records against a server that
 * decodes one request at a time (`max_concurrency: 1`) put 48 juror calls in our limiter at
 * once; the last of them waits for 47 others. With it, a record that would only queue waits
 * before its Phase 1 starts (its ceiling not yet running), and the limiter holds about one round
 * of calls beyond what the endpoint serves.
 *
 * Per endpoint e with capacity c (its max_concurrency) and a record putting k juror calls on it,
 * the record is admitted when e has no Phase 1 call outstanding, or when the outstanding ones
 * plus its own k stay within c + max(c, k). A fast endpoint (c = 32, 3 jurors) keeps up to 64
 * Phase 1 calls outstanding, more than it serves, so it never runs dry; a single-slot one keeps
 * the previous record's last call in flight and the next record's calls queued behind it.
 * Later phases (consolidation, deliberation) are not counted: they are bounded by the records in
 * flight. Records are admitted in arrival order; none is overtaken.
 */
import type { ParticipantConfig } from '../../schemas/config.js';

export interface Phase1Pass {
  /** one juror's call on `endpoint` is over: its share goes back */
  done(endpoint: string): void;
  /** Phase 1 is over (or never ran): whatever share is left goes back */
  release(): void;
}

export interface Phase1Admission {
  /** resolves when the record may start Phase 1 with these jurors */
  enter(jurors: readonly Pick<ParticipantConfig, 'endpoint'>[]): Promise<Phase1Pass>;
  /** Phase 1 calls outstanding on an endpoint (admitted, not yet over) */
  outstanding(endpoint: string): number;
  /** records waiting to be admitted */
  readonly waiting: number;
}

/** `capacity(endpoint)`: calls it serves at once (max_concurrency); unknown endpoints are not limited. */
export function phase1Admission(capacity: (endpoint: string) => number | undefined): Phase1Admission {
  const outstanding = new Map<string, number>();
  const queue: Array<{ demand: Map<string, number>; admit: () => void }> = [];
  const fits = (demand: Map<string, number>) =>
    [...demand].every(([e, k]) => {
      const out = outstanding.get(e) ?? 0;
      const c = capacity(e);
      return out === 0 || c === undefined || out + k <= c + Math.max(c, k);
    });
  const pump = () => {
    while (queue.length > 0 && fits(queue[0]!.demand)) queue.shift()!.admit();
  };
  const passFor = (demand: Map<string, number>): Phase1Pass => {
    for (const [e, k] of demand) outstanding.set(e, (outstanding.get(e) ?? 0) + k);
    const give = (e: string, n: number) => {
      const left = demand.get(e) ?? 0;
      const back = Math.min(left, n);
      if (back === 0) return;
      demand.set(e, left - back);
      outstanding.set(e, (outstanding.get(e) ?? 0) - back);
      pump();
    };
    return { done: (e) => give(e, 1), release: () => [...demand.keys()].forEach((e) => give(e, Number.POSITIVE_INFINITY)) };
  };
  return {
    enter(jurors) {
      const demand = new Map<string, number>();
      for (const j of jurors) demand.set(j.endpoint, (demand.get(j.endpoint) ?? 0) + 1);
      if (queue.length === 0 && fits(demand)) return Promise.resolve(passFor(demand));
      return new Promise((resolve) => {
        queue.push({ demand, admit: () => resolve(passFor(demand)) });
      });
    },
    outstanding: (e) => outstanding.get(e) ?? 0,
    get waiting() {
      return queue.length;
    },
  };
}
