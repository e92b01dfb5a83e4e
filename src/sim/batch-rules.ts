import { globRegExp, type BatchBehaviour } from './batch-profile.js';
import { createRng } from '../util/prng.js';

/**
 * Which lines of an accepted batch fail or expire. A custom_id is hit only the first time an
 * accepted batch holds it: a client that resubmits exactly what failed or expired must see it
 * succeed, or the "resubmitted once" tests would chase a simulator that never gives in.
 */

/** What happens to one line: answered by the engine, failed (HTTP 500), or left unexecuted at expiry. */
export type LinePlan = 'answer' | 'fail' | 'expire';

export interface BatchPlan {
  /** 1-based number of the batch among those accepted */
  seq: number;
  expires: boolean;
  lines: LinePlan[];
}

export class BatchRules {
  private readonly seen = new Set<string>();
  private accepted = 0;
  private readonly failGlobs: RegExp[];
  private readonly expireGlobs: RegExp[];

  constructor(private readonly b: BatchBehaviour) {
    this.failGlobs = b.fail_custom_ids.patterns.map(globRegExp);
    this.expireGlobs = b.expire_batches.custom_ids.map(globRegExp);
  }

  private fails(id: string): boolean {
    const f = this.b.fail_custom_ids;
    if (this.failGlobs.some((re) => re.test(id))) return true;
    return f.rate > 0 && createRng(['batch-fail', f.seed, id]).next() < f.rate;
  }

  /** Called once per accepted batch, in the order of acceptance; marks its custom_ids seen. */
  plan(ids: readonly string[]): BatchPlan {
    const seq = ++this.accepted;
    const first = ids.map((id) => !this.seen.has(id));
    for (const id of ids) this.seen.add(id);
    const e = this.b.expire_batches;
    const expires = e.nth.includes(seq) || ids.some((id, i) => first[i] && this.expireGlobs.some((re) => re.test(id)));
    // An expiring batch got through the first `kept` of its new lines before the window closed.
    const kept = Math.floor(e.completed_share * first.filter(Boolean).length);
    let fresh = 0;
    const lines = ids.map((id, i): LinePlan => {
      if (!first[i]) return 'answer';
      if (expires && fresh++ >= kept) return 'expire';
      return this.fails(id) ? 'fail' : 'answer';
    });
    return { seq, expires, lines };
  }
}
