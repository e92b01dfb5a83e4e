import { IMPACT_RANK, type Impact } from '../../schemas/defect.js';
import { parseActs, type Finding, type SimTurn } from './deliberation-parse.js';

/**
 * Who stands where: the simulator's replay of a deliberation. Items are the opening findings
 * grouped by shared steps (plus defects raised later); an item is named by its first step, and
 * every act on any of its steps applies to it. Replaying is idempotent (each act sets or clears
 * one juror's stance), so a moderator can replay a window of turns over its previous state.
 */

export interface Item {
  key: number;
  steps: number[];
  supporters: Set<string>;
  contesters: Set<string>;
  conceded: Set<string>;
  raisedBy: Set<string>;
  everContested: boolean;
  /** the most detailed finding: its wording stands for the item */
  best: Finding;
  /** turn of the latest dispute, and per supporter the turn it last answered one */
  lastContest: number;
  answered: Map<string, number>;
}

const detail = (f: Finding) => f.wording.length + f.evidence.length + (f.correct_value ? 50 : 0);

export class Ledger {
  readonly items: Item[] = [];

  constructor(findings: readonly Finding[]) {
    const parent = findings.map((_, i) => i);
    const root = (i: number): number => (parent[i] === i ? i : (parent[i] = root(parent[i]!)));
    const owner = new Map<number, number>();
    findings.forEach((f, i) => {
      for (const s of f.steps) {
        const o = owner.get(s);
        if (o === undefined) owner.set(s, i);
        else parent[root(i)] = root(o);
      }
    });
    const groups = new Map<number, Finding[]>();
    findings.forEach((f, i) => groups.set(root(i), [...(groups.get(root(i)) ?? []), f]));
    for (const g of groups.values()) {
      const steps = [...new Set(g.flatMap((f) => f.steps))].sort((a, b) => a - b);
      const best = g.reduce((a, b) => (detail(b) > detail(a) || (detail(b) === detail(a) && IMPACT_RANK[b.impact] > IMPACT_RANK[a.impact]) ? b : a));
      const who = new Set(g.map((f) => f.juror));
      this.items.push({ key: steps[0]!, steps, supporters: new Set(who), contesters: new Set(), conceded: new Set(), raisedBy: new Set(who), everContested: false, best, lastContest: 0, answered: new Map() });
    }
    this.items.sort((a, b) => a.key - b.key);
  }

  itemOf(step: number): Item | undefined {
    return this.items.find((it) => it.steps.includes(step));
  }

  apply(t: SimTurn): void {
    for (const act of parseActs(t.message)) {
      if (act.kind === 'nothing_new' || act.kind === 'agree_all') continue;
      let it = this.itemOf(act.step);
      if (act.kind === 'raise' && !it) {
        const best: Finding = { juror: t.speaker, steps: [act.step], impact: act.impact, wording: act.wording, evidence: '' };
        it = { key: act.step, steps: [act.step], supporters: new Set(), contesters: new Set(), conceded: new Set(), raisedBy: new Set([t.speaker]), everContested: false, best, lastContest: 0, answered: new Map() };
        this.items.push(it);
        this.items.sort((a, b) => a.key - b.key);
      }
      if (!it) continue;
      const me = t.speaker;
      switch (act.kind) {
        case 'endorse':
        case 'raise':
        case 'maintain':
          it.supporters.add(me);
          it.contesters.delete(me);
          it.conceded.delete(me);
          if (act.kind === 'maintain') it.answered.set(me, t.turn);
          break;
        case 'contest':
          it.contesters.add(me);
          it.supporters.delete(me);
          it.everContested = true;
          it.lastContest = t.turn;
          break;
        case 'concede':
          it.supporters.delete(me);
          it.conceded.add(me);
          it.answered.set(me, t.turn);
          break;
      }
    }
  }

  /** A supporter owes an answer when its item was disputed after it last answered. */
  owes(juror: string, it: Item): boolean {
    return it.supporters.has(juror) && it.lastContest > (it.answered.get(juror) ?? 0);
  }

  weighed(juror: string, it: Item): boolean {
    return it.supporters.has(juror) || it.contesters.has(juror) || it.conceded.has(juror);
  }

  open(it: Item): boolean {
    return it.supporters.size > 0 && it.contesters.size > 0;
  }
}

export function replay(findings: readonly Finding[], turns: readonly SimTurn[]): Ledger {
  const l = new Ledger(findings);
  for (const t of turns) l.apply(t);
  return l;
}

export function impactOf(it: Item): Impact {
  return it.best.impact;
}
