import { describe, expect, it } from 'vitest';
import { loadPromptSet } from '../../src/prompts/templates.js';
import { SimEngine } from '../../src/sim/engine.js';
import { parseProfile } from '../../src/sim/profile.js';
import { createMatcher } from '../../src/sim/taxonomy-match.js';
import { createTaxonomyTasks } from '../../src/sim/taxonomy-tasks.js';
import { DEFAULT_TASKS } from '../../src/sim/tasks.js';
import { assignMessages, consolidateMessages, growMessages } from '../../src/taxonomy/prompts.js';
import { loadTaxonomy } from '../../src/taxonomy/schema.js';
import { ConsolidateReply, GrowReply, type DraftTree } from '../../src/taxonomy/wire.js';
import { simDefects } from './helpers.js';

const prompts = loadPromptSet();
const taxonomy = loadTaxonomy();
const profile = parseProfile({ seed: 1, models: { default: { latency_ms: 0 } } });

function ask(engine: SimEngine, messages: ReturnType<typeof growMessages>): unknown {
  const r = engine.respond({ model: 'm', messages, seed: 4 }, 1);
  if (r.kind !== 'ok') throw new Error(JSON.stringify(r));
  return JSON.parse(r.content);
}

describe('simulated taxonomy calls', () => {
  it('the matcher reads every default leaf back as itself', () => {
    const nodes = taxonomy.categories.flatMap((c) => c.leaves.map((l) => ({ id: l.id, name: l.name, description: l.description })));
    const m = createMatcher(nodes);
    for (const n of nodes) expect(m.rank(`${n.name}. ${n.description}`)[0]?.id, n.id).toBe(n.id);
  });

  it('the default task list recognises assignment, grow and consolidation prompts', () => {
    const engine = new SimEngine({ profile, tasks: DEFAULT_TASKS });
    const lines = simDefects(3).map((d, i) => ({ key: `D${i + 1}`, description: d.what_went_wrong }));
    const tasks = [assignMessages(prompts, taxonomy, lines), growMessages(prompts, { categories: [] }, lines), consolidateMessages(prompts, { categories: [{ name: 'A', description: '', subcategories: [{ name: 'B', description: '' }] }] })].map((m) => {
      const r = engine.respond({ model: 'm', messages: m }, 1);
      return r.kind === 'ok' ? r.task : r.kind;
    });
    expect(tasks).toEqual(['taxonomy_assign', 'taxonomy_grow', 'taxonomy_consolidate']);
  });

  it('grow starts from nothing, keeps what it was given and adds only what does not fit', () => {
    const engine = new SimEngine({ profile, tasks: createTaxonomyTasks({ missFit: 0, dropNode: 0 }) });
    const lines = simDefects(30, 2).map((d, i) => ({ key: `D${i + 1}`, description: d.what_went_wrong }));
    const first = GrowReply.parse(ask(engine, growMessages(prompts, { categories: [] }, lines.slice(0, 15)))).taxonomy;
    expect(first.categories.length).toBeGreaterThan(0);
    const second = GrowReply.parse(ask(engine, growMessages(prompts, first, lines.slice(15)))).taxonomy;
    // Everything from the first tree is still there, in place and verbatim.
    first.categories.forEach((c, i) => expect(second.categories[i]!.subcategories.slice(0, c.subcategories.length)).toEqual(c.subcategories));
    // The same batch again adds nothing: all of it fits now.
    const again = GrowReply.parse(ask(engine, growMessages(prompts, second, lines))).taxonomy;
    expect(again).toEqual(second);
  });

  it('consolidation folds reworded duplicates into the first wording', () => {
    const engine = new SimEngine({ profile, tasks: createTaxonomyTasks() });
    const draft: DraftTree = {
      categories: [
        { name: 'Computation & algebraic manipulation', description: 'x', subcategories: [{ name: 'Sign error', description: 'A plus or minus sign is dropped, flipped or misapplied.' }, { name: 'Numerical calculation error', description: 'An arithmetic result is wrong.' }] },
        { name: 'Arithmetic problems', description: 'y', subcategories: [{ name: 'Variant: sign error', description: 'A plus or minus sign is dropped, flipped or misapplied.' }] },
      ],
    };
    const c = ConsolidateReply.parse(ask(engine, consolidateMessages(prompts, draft)));
    expect(c.categories).toHaveLength(1);
    expect(c.categories[0]!.subcategories.map((s) => [s.name, s.merged_from])).toEqual([
      ['Sign error', ['Variant: sign error']],
      ['Numerical calculation error', []],
    ]);
  });
});
