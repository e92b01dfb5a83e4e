import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../util/paths.js';

/** Every template the jury uses; a custom prompts_dir may override any of them by file name. */
export const TEMPLATE_NAMES = [
  'auditor.system',
  'auditor.user',
  'auditor.propagation',
  'consolidation.addendum',
  // Taxonomy assignment and induction (src/taxonomy).
  'taxonomy.system',
  'taxonomy.assign',
  'taxonomy.grow',
  'taxonomy.consolidate',
  // Deliberation (src/jury/deliberation): moderator, juror turns, final extraction.
  'moderator.system',
  'moderator.user',
  'moderator.fallback',
  'moderator.transcript',
  'juror-turn.user',
  'juror-turn.settled',
  'extraction.user',
  // Verification passes after Phase 2 (src/jury/passes): removal pass, evidence arbiter.
  'removal.user',
  'arbiter.user',
  // Grounding checker in deliberation (src/jury/deliberation/grounding.ts): the model check, the note that replaces a withheld claim.
  'grounding-check.user',
  'grounding.note',
  // Defect-guided repair (src/jury/repair): the retry prompt and its two findings intros.
  'repair.system',
  'repair.user',
  'repair.steps',
  'repair.full',
] as const;
export type TemplateName = (typeof TEMPLATE_NAMES)[number];

/** Templates of opt-in passes: hashed only when the config turns the pass on, so verdicts of configs without it keep their prompt_hash. */
export const OPT_IN: ReadonlySet<TemplateName> = new Set<TemplateName>(['removal.user', 'arbiter.user', 'grounding-check.user', 'grounding.note', 'repair.system', 'repair.user', 'repair.steps', 'repair.full']);

/** The repair templates: hashed into prompt_hash only when `repair` is on. */
export const REPAIR_TEMPLATES: readonly TemplateName[] = ['repair.system', 'repair.user', 'repair.steps', 'repair.full'];

export interface PromptSet {
  templates: Record<TemplateName, string>;
  /** sha256 over the names and texts of the templates the config uses: stamped on every verdict. */
  hash: string;
}

export function loadPromptSet(overrideDir?: string, used: ReadonlySet<TemplateName> = new Set()): PromptSet {
  const shipped = join(packageRoot(), 'prompts');
  const templates = {} as Record<TemplateName, string>;
  const h = createHash('sha256');
  for (const name of TEMPLATE_NAMES) {
    const custom = overrideDir ? join(overrideDir, `${name}.md`) : undefined;
    const file = custom && existsSync(custom) ? custom : join(shipped, `${name}.md`);
    const text = readFileSync(file, 'utf8');
    templates[name] = text;
    if (!OPT_IN.has(name) || used.has(name)) h.update(name).update('\0').update(text).update('\0');
  }
  return { templates, hash: h.digest('hex').slice(0, 16) };
}

/**
 * Fill {{name}} placeholders. Values are inserted verbatim in one pass, so a value that itself
 * contains "{{x}}" is never expanded; a placeholder with no value is a bug and throws.
 */
export function fillTemplate(template: string, values: Record<string, string>): string {
  const parts = templateParts(template);
  // parts alternate: literal text, placeholder name, literal text, ...
  let out = parts[0]!;
  for (let i = 1; i < parts.length; i += 2) {
    const key = parts[i]!;
    const v = values[key];
    if (v === undefined) throw new Error(`prompt template needs a value for {{${key}}}`);
    out += v + parts[i + 1]!;
  }
  return out;
}

// A run fills a handful of templates thousands of times: split each one once.
const splitTemplates = new Map<string, string[]>();

function templateParts(template: string): string[] {
  let parts = splitTemplates.get(template);
  if (!parts) {
    parts = template.split(/\{\{([a-z_]+)\}\}/);
    // Bounded, for callers that pass ever new template texts (tests, custom prompt sets).
    if (splitTemplates.size >= 64) splitTemplates.clear();
    splitTemplates.set(template, parts);
  }
  return parts;
}
