/**
 * Logical rounds (§2.2.2): a round ends once every juror still in the deliberation has had the
 * floor at least once in it; the next floor opens the next round. A floor counts whether the
 * juror spoke or its turn failed and was skipped, so one broken juror cannot hold a round open
 * (it is removed after repeated failures anyway).
 */
export class RoundBook {
  private readonly order: readonly string[];
  private readonly removedSet = new Set<string>();
  private heardSet = new Set<string>();
  private readonly lastFloor = new Map<string, number>();
  private lastSpeaker: string | null = null;
  /** the round the next floor belongs to (1-based) */
  round = 1;
  roundsCompleted = 0;
  /** floors given so far (spoken or skipped) */
  turns = 0;
  turnsInRound = 0;

  constructor(jurors: readonly string[]) {
    this.order = [...jurors];
  }

  active(): string[] {
    return this.order.filter((j) => !this.removedSet.has(j));
  }

  removed(): string[] {
    return this.order.filter((j) => this.removedSet.has(j));
  }

  heard(): string[] {
    return this.active().filter((j) => this.heardSet.has(j));
  }

  notHeard(): string[] {
    return this.active().filter((j) => !this.heardSet.has(j));
  }

  /** Turns since `id` last had the floor (all turns so far when it never had it). */
  silentFor(id: string): number {
    return this.turns - (this.lastFloor.get(id) ?? 0);
  }

  /** Record a floor; returns the turn number and round it belonged to. */
  give(id: string): { turn: number; round: number } {
    const at = { turn: this.turns + 1, round: this.round };
    this.turns++;
    this.turnsInRound++;
    this.heardSet.add(id);
    this.lastFloor.set(id, this.turns);
    this.lastSpeaker = id;
    this.closeIfComplete();
    return at;
  }

  remove(id: string): void {
    this.removedSet.add(id);
    this.closeIfComplete();
  }

  private closeIfComplete(): void {
    if (this.turnsInRound === 0) return;
    const act = this.active();
    if (act.length > 0 && act.every((j) => this.heardSet.has(j))) {
      this.roundsCompleted++;
      this.round++;
      this.turnsInRound = 0;
      this.heardSet = new Set();
    }
  }

  /**
   * Deterministic round-robin (the moderator fallback of App. F): the next juror in configured
   * order after the last speaker that has not yet been heard this round.
   */
  roundRobin(): string {
    const act = this.active();
    const waiting = this.notHeard();
    const pool = waiting.length > 0 ? waiting : act;
    const from = this.lastSpeaker === null ? -1 : this.order.indexOf(this.lastSpeaker);
    for (let k = 1; k <= this.order.length; k++) {
      const id = this.order[(from + k) % this.order.length]!;
      if (pool.includes(id)) return id;
    }
    return pool[0]!;
  }

  /**
   * The moderator's pick, checked: an id that is not an active juror, or a juror already heard
   * in a round that has run as many turns as there are jurors, is replaced by the round-robin
   * pick, so every round ends and every juror gets the floor in it.
   */
  resolve(named: string | null | undefined): { id: string; overridden: boolean } {
    const act = this.active();
    const want = (named ?? '').trim();
    const match = act.find((j) => j === want) ?? act.find((j) => j.toLowerCase() === want.toLowerCase());
    if (!match) return { id: this.roundRobin(), overridden: true };
    if (this.heardSet.has(match) && this.turnsInRound >= act.length) return { id: this.roundRobin(), overridden: true };
    return { id: match, overridden: false };
  }
}
