import { AsyncLocalStorage } from 'node:async_hooks';
import { copyFileSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import PQueue from 'p-queue';
import type { JuryConfigInput } from '../schemas/config.js';
import type { Verdict } from '../schemas/verdict.js';
import { parseConfig } from '../src/config/load.js';
import { deliberationSettings, triage, type Phase2Path } from '../src/jury/deliberation/index.js';
import type { AdaptivePolicy } from '../schemas/config.js';
import { judgeRecord } from '../src/jury/judge.js';
import type { ChatMessage, ChatRequest, Provider } from '../src/llm/types.js';
import { prepareRecord } from '../src/pipeline/steps/segment.js';
import { openRuntime } from '../src/compose/runtime.js';
import { buildGoldIndex, createSimProvider, parseProfile, type ProfileFileInput } from '../src/sim/index.js';
import { packageRoot } from '../src/util/paths.js';
import type { TraceRecord } from '../schemas/trace.js';
import { loadProcessBench } from '../src/eval/adapters/processbench.js';
import { sharedDataDir } from '../src/eval/data.js';
import { syntheticRecords } from '../src/sim/synthetic.js';
import { fmt } from './common.js';

/**
 * Calls and tokens per record for each Phase 2 mode, as ratios to a single judge, and how much
 * of every prompt is a prefix already sent for the same record (what vLLM / SGLang prefix
 * caching can reuse). Jurors are the in-process simulator answering at once; replies are sized
 * like a reasoning model's (PROFILE below), and tokens are the simulator's chars/4 estimate.
 */

/** Output sizes of a medium-effort reasoning model on short math traces (see docs/benchmarks.md). */
const PROFILE: ProfileFileInput = {
  seed: 797,
  models: {
    default: { latency_ms: 0, recall: 0.6, false_positive_rate: 0.04, fp_severity_mix: { neutral: 0.15, minor: 0.5, major: 0.3, fatal: 0.05 }, words_per_defect: 45, reasoning_words: 350 },
    'sim-juror-a': { recall: 0.75, false_positive_rate: 0.03, words_per_defect: 55 },
    'sim-juror-b': { recall: 0.6, false_positive_rate: 0.05 },
    'sim-juror-c': { recall: 0.45, false_positive_rate: 0.08, words_per_defect: 35 },
    'sim-consolidator': { recall: 0.7, false_positive_rate: 0.02, consolidator: { accept_true: 0.92, accept_false: 0.2, fill_recall: 0.35, fill_false_positive_rate: 0.005 } },
    'sim-moderator': { reasoning_words: 200 },
  },
};

const MODES: Record<string, () => Partial<JuryConfigInput>> = {
  single: () => ({ mode: 'single' }),
  // Phase 1 alone: what every Phase 2 policy pays before it decides anything.
  'Phase 1 alone (union)': () => ({ mode: 'union' }),
  consolidation: () => ({ mode: 'consolidation' }),
  deliberation: () => ({ mode: 'deliberation' }),
  adaptive: () => ({ mode: 'deliberation', deliberation: { adaptive: { enabled: true } } }),
  'adaptive, lean (steps only, 1 round)': () => ({ mode: 'deliberation', deliberation: { adaptive: { enabled: true, same_severity: false, max_rounds: 1 } } }),
};

const SUBSETS = ['gsm8k', 'math', 'olympiadbench', 'omnimath'];

/** An equal share of each ProcessBench subset (they differ in trace length); synthetic without the data. */
function records(n: number): { records: TraceRecord[]; source: string } {
  const dir = sharedDataDir();
  if (!dir) return { records: syntheticRecords(n, { seed: 7, wordsPerStep: 30 }), source: 'synthetic (ProcessBench data not found)' };
  const per = Math.ceil(n / SUBSETS.length);
  const out = SUBSETS.flatMap((s) => loadProcessBench(join(dir, `processbench/${s}.json`)).slice(0, per));
  return { records: out.slice(0, n), source: `ProcessBench, the first ${per} of each of ${SUBSETS.join(', ')}` };
}

/** Which kind of call a request is, from its system prompt and blocks (the provider sees no context). */
function kindOf(messages: readonly ChatMessage[]): string {
  const system = messages[0]?.content ?? '';
  const user = messages[1]?.content ?? '';
  if (system.startsWith('You chair')) return user.includes('<<<BEGIN DELIBERATION OUTCOME') ? 'extraction' : 'moderator';
  if (user.includes('<<<BEGIN MODERATOR INSTRUCTION')) return 'juror turn';
  return user.includes('<<<BEGIN PANEL FINDINGS') ? 'consolidation' : 'phase 1';
}

function serialise(messages: readonly ChatMessage[]): string {
  return messages.map((m) => `<|${m.role}|>${m.content}<|end|>`).join('');
}

function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/**
 * Per record: every prompt sent so far, and how many of its characters were already a sent
 * prefix. `warm` also counts a prefix sent for an earlier record (a server's cache is shared by
 * all records: the rubric and the moderator's instructions are the same for every one of them);
 * the last prompt of each kind stands in for all earlier records, since their shared part is
 * the same fixed text.
 */
class PrefixMeter {
  private readonly sent = new Map<string, string[]>();
  private readonly lastOfKind = new Map<string, { record: string; prompt: string }>();
  chars = 0;
  reused = 0;
  warm = 0;
  /** call kind (moderator and juror turns: first of the record or later) -> calls, characters, characters not already sent */
  readonly byKind = new Map<string, { calls: number; chars: number; fresh: number }>();
  private readonly kindsSeen = new Map<string, Set<string>>();
  see(record: string, kind: string, prompt: string): void {
    const before = this.sent.get(record) ?? [];
    let best = 0;
    for (const p of before) best = Math.max(best, commonPrefix(p, prompt));
    this.chars += prompt.length;
    this.reused += best;
    const other = this.lastOfKind.get(kind);
    this.warm += Math.max(best, other && other.record !== record ? commonPrefix(other.prompt, prompt) : 0);
    this.lastOfKind.set(kind, { record, prompt });
    // A record's first moderator decision and first juror turn bring its fixed text; later ones only what changed.
    const seen = this.kindsSeen.get(record) ?? new Set<string>();
    const label = kind === 'moderator' || kind === 'juror turn' ? `${kind}, ${seen.has(kind) ? 'later' : 'first of the record'}` : kind;
    seen.add(kind);
    this.kindsSeen.set(record, seen);
    const k = this.byKind.get(label) ?? { calls: 0, chars: 0, fresh: 0 };
    k.calls++;
    k.chars += prompt.length;
    k.fresh += prompt.length - best;
    this.byKind.set(label, k);
    before.push(prompt);
    this.sent.set(record, before);
  }
  forget(record: string): void {
    this.sent.delete(record);
    this.kindsSeen.delete(record);
  }
}

interface ModeResult {
  name: string;
  calls: number;
  tokensIn: number;
  tokensOut: number;
  prefixShare: number;
  warmShare: number;
  policy: AdaptivePolicy;
  byKind: PrefixMeter['byKind'];
  verdicts: Verdict[];
  seconds: number;
}

function pathOf(v: Verdict, policy: AdaptivePolicy): Phase2Path {
  if (v.termination_reason === 'skipped_empty' || v.termination_reason === 'skipped_unanimous') return v.termination_reason;
  if (v.jurors_ok < 2) return 'too_few_jurors';
  const t = triage(v.phase1_judgements, policy.same_severity);
  return policy.enabled && policy.contested_only && t.path === 'contested' && t.settled.length > 0 ? 'contested_only' : 'full';
}

export async function benchDeliberation(n = 1000): Promise<string> {
  const { records: recs, source } = records(n);
  n = recs.length;
  const gold = buildGoldIndex(recs);
  const results: ModeResult[] = [];
  for (const [name, mode] of Object.entries(MODES)) {
    const sim = createSimProvider({ profile: parseProfile(PROFILE), gold, latency: 'instant' });
    const meter = new PrefixMeter();
    const current = new AsyncLocalStorage<string>();
    const metered: Provider = {
      name: 'metered-sim',
      complete(req: ChatRequest, signal: AbortSignal) {
        meter.see(current.getStore() ?? '?', kindOf(req.messages), serialise(req.messages));
        return sim.complete(req, signal);
      },
    };
    const config = parseConfig({
      endpoints: { sim: { kind: 'simulator', max_concurrency: 64 } },
      jurors: [
        { id: 'jury-0', endpoint: 'sim', model: 'sim-juror-a' },
        { id: 'jury-1', endpoint: 'sim', model: 'sim-juror-b' },
        { id: 'jury-2', endpoint: 'sim', model: 'sim-juror-c' },
      ],
      consolidator: { id: 'consolidator', endpoint: 'sim', model: 'sim-consolidator' },
      moderator: { id: 'moderator', endpoint: 'sim', model: 'sim-moderator' },
      cache: { enabled: false, dir: '.cache/none' },
      ...mode(),
    });
    const rt = await openRuntime({ config, auditLogPath: null, providerFor: () => metered });
    const queue = new PQueue({ concurrency: 16 });
    const t0 = performance.now();
    const verdicts = await Promise.all(
      recs.map((r) =>
        queue.add(async () => {
          const p = prepareRecord(r, config);
          if (!p.ok) throw new Error(p.error);
          const v = await current.run(r.id, () => judgeRecord(rt.jury, p.input));
          meter.forget(r.id);
          return v;
        }),
      ),
    );
    const seconds = (performance.now() - t0) / 1000;
    await rt.close();
    const usage = verdicts.flatMap((v) => v!.usage);
    results.push({
      name,
      calls: usage.length / n,
      tokensIn: usage.reduce((a, u) => a + u.tokens_in, 0) / n,
      tokensOut: usage.reduce((a, u) => a + u.tokens_out, 0) / n,
      prefixShare: meter.reused / meter.chars,
      warmShare: meter.warm / meter.chars,
      policy: deliberationSettings(config).adaptive,
      byKind: meter.byKind,
      verdicts: verdicts as Verdict[],
      seconds,
    });
  }
  return report(results, n, source);
}

function report(results: readonly ModeResult[], n: number, source: string): string {
  const single = results.find((r) => r.name === 'single')!;
  const base = single.tokensIn + single.tokensOut;
  // Prompt tokens a prefix cache cannot serve, plus all output tokens.
  const uncached = (r: ModeResult) => r.tokensIn * (1 - r.prefixShare) + r.tokensOut;
  const lines = [
    `${n} records (${source}); 3 jurors (+ consolidator / moderator); in-process simulator, replies sized like a reasoning model (about 350 words of reasoning per call, 200 for the moderator).`,
    '',
    '| mode | calls / record | prompt tokens | output tokens | calls × single | tokens × single | prompt share already sent for the record | same, warm server | uncached tokens × single | seconds |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of results) {
    lines.push(
      `| ${r.name} | ${fmt(r.calls, 2)} | ${fmt(r.tokensIn, 0)} | ${fmt(r.tokensOut, 0)} | ${fmt(r.calls / single.calls, 2)} | **${fmt((r.tokensIn + r.tokensOut) / base, 2)}** | **${fmt(r.prefixShare, 3)}** | ${fmt(r.warmShare, 3)} | ${fmt(uncached(r) / uncached(single), 2)} | ${fmt(r.seconds, 1)} |`,
    );
  }
  const delib = results.find((r) => r.name === 'deliberation')!;
  const fresh = [...delib.byKind.values()].reduce((a, k) => a + k.fresh, 0);
  lines.push('', '**Where deliberation\'s uncached prompt tokens come from** (per record; characters / 4):', '', '| call | calls | prompt tokens | not already sent | not already sent, per call | share of all uncached |', '|---|---|---|---|---|---|');
  const order = [...delib.byKind.keys()].sort();
  for (const kind of order) {
    const k = delib.byKind.get(kind)!;
    lines.push(`| ${kind} | ${fmt(k.calls / n, 2)} | ${fmt(k.chars / 4 / n, 0)} | ${fmt(k.fresh / 4 / n, 0)} | ${fmt(k.fresh / 4 / k.calls, 0)} | ${fmt(k.fresh / fresh, 2)} |`);
  }
  for (const r of results.filter((x) => x.name.startsWith('deliberation') || x.name.startsWith('adaptive'))) {
    const count = <K extends string>(keys: K[]) => {
      const m = new Map<K, number>();
      for (const k of keys) m.set(k, (m.get(k) ?? 0) + 1);
      return [...m.entries()].sort((a, b) => b[1] - a[1]).map(([k, c]) => `${k} ${c}`).join(', ');
    };
    const held = r.verdicts.filter((v) => v.rounds > 0);
    const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
    lines.push(
      '',
      `**${r.name}**: paths: ${count(r.verdicts.map((v) => pathOf(v, r.policy)))}. Endings: ${count(r.verdicts.map((v) => v.termination_reason))}. Where a deliberation ran: ${fmt(mean(held.map((v) => v.transcript.length)), 1)} juror turns and ${fmt(mean(held.map((v) => v.rounds)), 2)} rounds on average; degraded verdicts: ${r.verdicts.filter((v) => v.degraded).length}.`,
    );
  }
  return lines.join('\n');
}
