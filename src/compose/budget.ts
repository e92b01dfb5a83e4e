/**
 * Run budgets (`budget_usd`, `budget_tokens`): when the spend reaches a cap, the run stops
 * reading records the way SIGTERM does (in-flight records finish, their ranges commit).
 *
 * The spend is cumulative over the output, so a cap means the same thing however often the run
 * is resumed: the usage recorded on already committed verdicts and repairs rows (each manifest's `range.usage`)
 * plus the usage of the records this invocation has judged. Both count a record's verdict
 * usage and the usage of its `repairs` rows (the generator's retries and, with `repair.rejudge`,
 * their re-judging; cached replies included), so every committed record is counted exactly once.
 */
import type { CommittedSpend } from './resume.js';

export interface BudgetLimits {
  usd?: number;
  tokens?: number;
}

/** What this invocation has judged so far (the stage's counters). */
export interface RunSpend {
  tokens_in: number;
  tokens_out: number;
  cost_usd: number;
}

const usd = (n: number) => n.toFixed(6).replace(/0+$/, '').replace(/\.$/, '');

export class Budget {
  constructor(
    readonly limits: BudgetLimits,
    readonly before: CommittedSpend,
  ) {}

  get active(): boolean {
    return this.limits.usd !== undefined || this.limits.tokens !== undefined;
  }

  /** Why intake must stop now (one line naming the cap and the spend), or null. */
  reached(now: RunSpend): string | null {
    const tokens = now.tokens_in + now.tokens_out;
    const { usd: capUsd, tokens: capTokens } = this.limits;
    if (capUsd !== undefined && this.before.usd + now.cost_usd >= capUsd) {
      return `budget_usd ${usd(capUsd)} reached: ${usd(this.before.usd + now.cost_usd)} USD spent (${usd(this.before.usd)} by committed ranges of earlier runs, ${usd(now.cost_usd)} by this one)`;
    }
    if (capTokens !== undefined && this.before.tokens + tokens >= capTokens) {
      return `budget_tokens ${capTokens} reached: ${this.before.tokens + tokens} tokens spent (${this.before.tokens} by committed ranges of earlier runs, ${tokens} by this one)`;
    }
    return null;
  }
}

/**
 * A budget watch over the stage's progress: aborts `signal` once the budget is reached and calls
 * `onStop` with the reason, once. `check` is called before the stage starts and on every update.
 */
export function budgetWatch(budget: Budget, onStop: (reason: string) => void): { signal: AbortSignal; check: (now: RunSpend) => void } {
  const stopper = new AbortController();
  return {
    signal: stopper.signal,
    check(now) {
      if (stopper.signal.aborted || !budget.active) return;
      const why = budget.reached(now);
      if (why === null) return;
      onStop(why);
      stopper.abort();
    },
  };
}
