import { afterEach, describe, expect, it } from 'vitest';
import { ParticipantConfig } from '../../schemas/config.js';
import type { Gateway } from '../../src/llm/gateway.js';
import type { CallResult, ModelGateway, StructuredCall } from '../../src/llm/types.js';
import { loadPromptSet } from '../../src/prompts/templates.js';
import { createAssigner, statusOf } from '../../src/taxonomy/assign.js';
import { loadTaxonomy, TaxonomyIndex } from '../../src/taxonomy/schema.js';
import { parseJsonLines, TAXONOMY_BLOCK } from '../../src/taxonomy/wire.js';
import { blockMap } from '../../src/sim/blocks.js';
import { recording, SEAT, simDefects, simGateway } from './helpers.js';

const prompts = loadPromptSet();
const taxonomy = loadTaxonomy();
const index = new TaxonomyIndex(taxonomy);
const open: Gateway[] = [];
const gw = (...a: Parameters<typeof simGateway>) => {
  const g = simGateway(...a);
  open.push(g);
  return g;
};
afterEach(async () => {
  await Promise.all(open.splice(0).map((g) => g.close()));
});

const assigner = (gateway: ModelGateway, over: { batchSize?: number; maxRounds?: number } = {}) =>
  createAssigner({ gateway, seat: SEAT, prompts, taxonomy, batchSize: over.batchSize ?? 8, maxRounds: over.maxRounds ?? 3, caller: 'test' });

function defectsBlock(call: StructuredCall<unknown>): Record<string, unknown>[] {
  return parseJsonLines(blockMap(call.messages[1]!.content).get(TAXONOMY_BLOCK.defects)!);
}

describe('assignment against the taxonomy', () => {
  it('labels every defect with a real leaf and its own category, in batches, ledgered as the taxonomy phase', async () => {
    const g = gw({ invalidRate: 0, omitRate: 0 });
    const rec = recording(g);
    const defects = simDefects(20);
    const r = await assigner(rec.gateway).assign('rec-1', defects);
    expect(rec.calls).toHaveLength(3); // 8 + 8 + 4
    expect(rec.calls.map((c) => defectsBlock(c).length)).toEqual([8, 8, 4]);
    expect(rec.calls.every((c) => c.ctx.phase === 'taxonomy' && c.ctx.record_id === 'rec-1')).toBe(true);
    for (const d of defects) {
      const l = r.labels.get(d.id)!;
      expect(l.status, d.id).toBe('assigned');
      if (l.status !== 'assigned') continue;
      expect(index.leaf(l.leaf_id)?.category.id).toBe(l.category_id);
    }
    expect(r.usage).toHaveLength(3);
    expect(g.ledger.summary().by_phase.taxonomy!.calls).toBe(3);
    // The simulator reads the defects: an arithmetic slip is a computation leaf.
    const slip = defects.findIndex((d) => /arithmetic slip/.test(d.what_went_wrong));
    expect(slip).toBeGreaterThanOrEqual(0);
    const slipLabel = r.labels.get(defects[slip]!.id)!;
    expect(slipLabel.status === 'assigned' && slipLabel.category_id).toBe('computation');
  });

  it('a defect gets the same leaf whatever batch it is in', async () => {
    const defects = simDefects(12, 7);
    const a = await assigner(gw({ invalidRate: 0, omitRate: 0 }), { batchSize: 12 }).assign('x', defects);
    const b = await assigner(gw({ invalidRate: 0, omitRate: 0 }), { batchSize: 1 }).assign('y', [...defects].reverse());
    for (const d of defects) expect(b.labels.get(d.id), d.id).toEqual(a.labels.get(d.id));
    expect(new Set([...a.labels.values()].map((l) => (l.status === 'assigned' ? l.leaf_id : '-'))).size).toBeGreaterThan(2);
  });

  it('invalid and missing answers are retried with a note, only for those defects; what never resolves is unassigned with its reason', async () => {
    const g = gw({ invalidRate: 0.3, omitRate: 0.2 });
    const rec = recording(g);
    const defects = simDefects(40, 3);
    const r = await assigner(rec.gateway, { batchSize: 40, maxRounds: 4 }).assign('rec-2', defects);
    const [first, ...retries] = rec.calls;
    expect(defectsBlock(first!)).toHaveLength(40);
    expect(retries.length).toBeGreaterThan(0);
    // Each retry carries only leftovers and says what went wrong with them.
    expect(defectsBlock(retries[0]!).length).toBeLessThan(40);
    expect(retries[0]!.messages[1]!.content).toMatch(/## Attempt 2: these defects come back/);
    expect(retries[0]!.messages[1]!.content).toMatch(/is not a leaf id of this taxonomy|was left out of the answer/);
    expect(retries.map((c) => c.ctx.sample_index)).toEqual(retries.map((_, i) => i + 1));
    const statuses = defects.map((d) => statusOf(r.labels.get(d.id)!));
    expect(statuses.filter((s) => s === 'assigned').length).toBeGreaterThan(30);
    for (const d of defects) {
      const l = r.labels.get(d.id)!;
      if (l.status === 'assigned') expect(index.leaf(l.leaf_id)).toBeDefined();
    }
  });

  it('a model that never answers validly leaves every defect unassigned with the reason', async () => {
    const invalid = await assigner(gw({ invalidRate: 1, omitRate: 0 }), { maxRounds: 2 }).assign('r', simDefects(5));
    expect([...invalid.labels.values()].map(statusOf)).toEqual(Array(5).fill('unassigned:invalid_leaf'));
    const l = [...invalid.labels.values()][0]!;
    expect(l.status === 'unassigned' && l.detail).toMatch(/^".+"$/); // the id it gave, for the audit
    const omitted = await assigner(gw({ invalidRate: 0, omitRate: 1 }), { maxRounds: 2 }).assign('r', simDefects(5));
    expect([...omitted.labels.values()].map(statusOf)).toEqual(Array(5).fill('unassigned:omitted'));
  });

  it('a failing endpoint means unassigned:call_failed, not an exception', async () => {
    const g = gw();
    const seat = ParticipantConfig.parse({ id: 't', endpoint: 'nowhere', model: 'm' });
    const a = createAssigner({ gateway: g, seat, prompts, taxonomy, batchSize: 4, maxRounds: 2, caller: 'test' });
    const r = await a.assign('r', simDefects(3));
    expect([...r.labels.values()].map(statusOf)).toEqual(Array(3).fill('unassigned:call_failed'));
  });

  it('replies are read per entry: duplicates, unknown keys, numbers and nulls are handled', async () => {
    const fake: ModelGateway = {
      async structured<T>(c: StructuredCall<T>): Promise<CallResult<T>> {
        const reply = { assignments: [{ key: 'D1', leaf_id: 'computation.sign' }, { key: 'D1', leaf_id: 'logic.other' }, { key: 2, leaf_id: 'output.truncated' }, { key: 'D3', leaf_id: null }, { key: 'D9', leaf_id: 'rigor.circular_verification' }] };
        const usage = { phase: c.ctx.phase, participant: 't', model: 'm', endpoint: 'e', tokens_in: 1, tokens_out: 1, cost_usd: 0, latency_ms: 0, attempts: 1, outcome: 'ok' as const };
        return { value: c.schema.parse(reply), raw: JSON.stringify(reply), usage, cached: false };
      },
      text: () => Promise.reject(new Error('unused')),
    };
    const r = await assigner(fake, { maxRounds: 1 }).assign('r', simDefects(4));
    const ids = simDefects(4).map((d) => d.id);
    expect(r.labels.get(ids[0]!)).toEqual({ status: 'assigned', leaf_id: 'computation.sign', category_id: 'computation' });
    expect(r.labels.get(ids[1]!)).toEqual({ status: 'assigned', leaf_id: 'output.truncated', category_id: 'output' });
    expect(r.labels.get(ids[2]!)).toMatchObject({ status: 'unassigned', reason: 'invalid_leaf', detail: '"null"' });
    expect(r.labels.get(ids[3]!)).toMatchObject({ status: 'unassigned', reason: 'omitted' });
  });
});
