import type { ChatMessage } from '../llm/types.js';
import { frameBlock } from '../prompts/frame.js';
import { fillTemplate, type PromptSet } from '../prompts/templates.js';
import type { Taxonomy } from './schema.js';
import { renderDefectLines, renderLeaves, renderTree, TAXONOMY_BLOCK, type DefectLine, type DraftTree } from './wire.js';

/** Why an earlier answer for a defect could not be used; shown to the model on a retry. */
export interface RetryHint {
  key: string;
  problem: string;
}

/** The attempt number makes each retry a new question, not a replay of the one that failed. */
function retryNote(hints: readonly RetryHint[], attempt: number): string {
  if (hints.length === 0) return '';
  const lines = hints.map((h) => `- ${h.key}: ${h.problem}`);
  return `\n## Attempt ${attempt}: these defects come back from an earlier answer that could not be used\n${lines.join('\n')}\nGive each of them a leaf id copied exactly from the list.\n`;
}

/** Assign: the leaves of `taxonomy` and a batch of defects (keys local to the batch). */
export function assignMessages(set: PromptSet, taxonomy: Taxonomy, defects: readonly DefectLine[], hints: readonly RetryHint[] = [], attempt = 1): ChatMessage[] {
  const user = fillTemplate(set.templates['taxonomy.assign'], {
    taxonomy_block: frameBlock(TAXONOMY_BLOCK.leaves, renderLeaves(taxonomy)),
    defects_block: frameBlock(TAXONOMY_BLOCK.defects, renderDefectLines(defects)),
    retry_note: retryNote(hints, attempt),
  });
  return [
    { role: 'system', content: set.templates['taxonomy.system'] },
    { role: 'user', content: user },
  ];
}

/** Grow: the tree so far plus one interleaved batch of defect descriptions. */
export function growMessages(set: PromptSet, tree: DraftTree, batch: readonly DefectLine[]): ChatMessage[] {
  const user = fillTemplate(set.templates['taxonomy.grow'], {
    taxonomy_block: frameBlock(TAXONOMY_BLOCK.current, renderTree(tree)),
    defects_block: frameBlock(TAXONOMY_BLOCK.batch, renderDefectLines(batch)),
  });
  return [
    { role: 'system', content: set.templates['taxonomy.system'] },
    { role: 'user', content: user },
  ];
}

/** Consolidate: the grown tree, to be deduplicated and regrouped. */
export function consolidateMessages(set: PromptSet, tree: DraftTree): ChatMessage[] {
  const user = fillTemplate(set.templates['taxonomy.consolidate'], { taxonomy_block: frameBlock(TAXONOMY_BLOCK.draft, renderTree(tree)) });
  return [
    { role: 'system', content: set.templates['taxonomy.system'] },
    { role: 'user', content: user },
  ];
}
