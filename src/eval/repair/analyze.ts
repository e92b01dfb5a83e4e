/**
 * `eval repair` as one pure function: repairs rows (and optionally the corpus's original
 * correctness) in, the three analyses of App. N.3 out. docs/repair-analysis.md explains each.
 */
import type { RepairCondition, RepairRow } from '../../../schemas/repair.js';
import { type CorpusAccuracy, corpusAccuracy, type OriginalRecord } from './accuracy.js';
import { type ConditionComparison, compareConditions } from './compare.js';
import { type AttemptPolicy, repairOutcomes } from './outcomes.js';
import { type Transitions, transitionTable } from './transitions.js';

export interface RepairAnalysisOptions {
  attempts: AttemptPolicy;
  /** conditions compared (a − b); null: full − steps when both are there */
  compare: readonly [RepairCondition, RepairCondition] | null;
  /** bootstrap resamples, seed and coverage (also the Wilson intervals' coverage) */
  resamples: number;
  seed: number;
  level: number;
}

export const DEFAULT_REPAIR_ANALYSIS: RepairAnalysisOptions = { attempts: 'first', compare: null, resamples: 10_000, seed: 0, level: 0.95 };

/** Where the originals came from: an --originals file, or derived from the output's corpus (./originals.ts). */
export interface OriginalsSource {
  from: 'file' | 'corpus';
  /** the file, or the output whose corpus was read */
  location: string;
}

export interface OriginalsSummary extends OriginalsSource {
  /** original records given (file lines, or corpus records) */
  records: number;
  /** of those, without a reference answer (`correct` null) */
  no_reference: number;
}

export interface RepairAnalysis {
  settings: RepairAnalysisOptions & { bootstrap_unit: 'problem_id' };
  rows: number;
  duplicates: number;
  transitions: Transitions[];
  /** null without the originals: the repairs rows alone do not hold the records no gate retried */
  corpus: CorpusAccuracy | null;
  /** where corpus accuracy's originals came from; null when there were none */
  originals: OriginalsSummary | null;
  comparisons: ConditionComparison[];
  notes: string[];
}

/**
 * `source` says where `originals` came from (default: a file, location unknown); `missing` is
 * why there are none, for the notes (default: no --originals and no corpus to derive them from).
 */
export function analyzeRepairs(rows: readonly RepairRow[], originals: readonly OriginalRecord[] | null, opts: RepairAnalysisOptions = DEFAULT_REPAIR_ANALYSIS, source: OriginalsSource = { from: 'file', location: '' }, missing = 'no --originals file and no committed corpus to derive them from'): RepairAnalysis {
  const { outcomes, duplicates } = repairOutcomes(rows, opts.attempts);
  const boot = { resamples: opts.resamples, seed: opts.seed, level: opts.level };
  const notes: string[] = [];
  if (duplicates) notes.push(`${duplicates} repairs row(s) repeat a (gate, condition, record, attempt) already read; the first one read was kept.`);
  const pair = opts.compare ?? (['full', 'steps'] as const);
  const present = new Set(outcomes.map((o) => o.condition));
  if (!pair.every((c) => present.has(c))) notes.push(`No paired comparison: the rows have no ${pair.filter((c) => !present.has(c)).join(' or ')} retries.`);
  const corpus = originals ? corpusAccuracy(originals, outcomes, boot) : null;
  if (!originals) notes.push(`Corpus accuracy not computed: ${missing} (it needs the original correctness of every corpus record, retried or not).`);
  const given = source.from === 'file' ? '--originals' : 'the corpus';
  if (corpus?.conflicts) notes.push(`${corpus.conflicts} record(s) have another original correctness in ${given} than in the repairs rows; the rows' value was used.`);
  const summary = originals ? { ...source, records: originals.length, no_reference: originals.filter((o) => o.correct === null).length } : null;
  if (summary && summary.records > 0 && summary.no_reference === summary.records) notes.push(`None of the ${summary.records} original records has a reference answer${source.from === 'corpus' ? ' under this input.mapping (give -c with the config the output was judged with: input.mapping.reference_answer)' : ''}.`);
  return {
    settings: { ...opts, compare: pair, bootstrap_unit: 'problem_id' },
    rows: rows.length,
    duplicates,
    transitions: transitionTable(outcomes, opts.level),
    corpus,
    originals: summary,
    comparisons: compareConditions(outcomes, pair[0], pair[1], boot),
    notes,
  };
}
