/**
 * Jurors whose findings cite steps that are not in the trace (0, -1, 999: what a model counting
 * from 0 or guessing produces), through the real openai client against a scripted server. Such
 * a reply is re-asked once with the reason; a second one fails the juror for the record, and the
 * verdict says so. Never a clean `keep`.
 */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { deriveRows } from '../../src/derive/rows.js';
import { prepareRecord } from '../../src/pipeline/steps/segment.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { judgeAll, juryOn, withRuntime } from '../helpers/jury.js';
import { ok, startScriptedServer, type RecordedRequest } from '../llm/helpers/scripted-server.js';

const finding = (refs: unknown[]) => ({ statement_refs: refs, what_went_wrong: 'the sum is wrong', impact: 'fatal', evidence: 'it says 5' });
const negatives = (...refs: unknown[][]) => ok(JSON.stringify({ negatives: refs.map(finding) }));
const isReask = (r: RecordedRequest) => JSON.stringify(r.body.messages).includes('could not be used');
const lastUser = (r: RecordedRequest) => String((r.body.messages as Array<{ content: string }>).at(-1)!.content);

const records = syntheticRecords(1, { seed: 9 });
const config = parseConfig(juryOn('http://127.0.0.1:9/v1'));
const nSteps = (() => {
  const p = prepareRecord(records[0]!, config);
  if (!p.ok) throw new Error(p.error);
  return p.input.steps.length;
})();

async function judgeWith(juror: (r: RecordedRequest) => ReturnType<typeof ok>) {
  const server = await startScriptedServer((r) => (r.body.model === 'sim-consolidator' ? negatives(['STEP-1']) : juror(r)));
  try {
    const [v] = await withRuntime(juryOn(server.url), (rt) => judgeAll(rt, records));
    return { v: v!, requests: server.requests };
  } finally {
    await server.close();
  }
}

describe('findings citing steps outside the trace', () => {
  it('are re-asked once with the reason; still out of range, every juror fails and there is no verdict', async () => {
    const { v, requests } = await judgeWith(() => negatives([0, -1, 999]));
    const jurorCalls = requests.filter((r) => r.body.model !== 'sim-consolidator');
    expect(jurorCalls).toHaveLength(6); // 3 jurors, each asked once more
    const reasks = jurorCalls.filter(isReask);
    expect(reasks).toHaveLength(3);
    for (const r of reasks) expect(lastUser(r)).toContain(`0, -1, 999 are not a step of this trace: it has ${nSteps} steps, STEP-1 to STEP-${nSteps} (steps are numbered from 1, not from 0)`);
    expect(v.jurors_ok).toBe(0);
    expect(v.error).toMatch(/too few jurors succeeded/);
    for (const j of v.phase1_judgements) expect(j.error).toMatch(/not a step of this trace/);
    const rows = deriveRows(v, { source: 's', unit: 'u', offset: 0 }, {}, config);
    expect(rows.decision.decision).not.toBe('keep');
  });

  it('one juror that keeps citing STEP-999 fails for the record: the verdict is degraded and names it', async () => {
    const { v } = await judgeWith((r) => (r.body.model === 'sim-juror-b' ? negatives(['STEP-999']) : negatives(['STEP-2'])));
    expect(v.error).toBeNull();
    expect(v.degraded).toBe(true);
    expect(v.degraded_reason).toMatch(/^1 of 3 jurors failed \(jury-1: [\s\S]*"STEP-999" is not a step of this trace/);
  });

  it('a reply numbered from 0 is not shifted: the re-asked juror renumbers it and its findings count', async () => {
    const { v, requests } = await judgeWith((r) => (isReask(r) ? negatives(['STEP-1']) : negatives([0])));
    expect(requests.filter(isReask)).toHaveLength(3);
    expect(v.degraded).toBe(false);
    expect(v.phase1_judgements.map((j) => j.defects.map((d) => d.statement_refs))).toEqual([[[1]], [[1]], [[1]]]);
    expect(v.dropped_refs).toBe(0);
  });
});
