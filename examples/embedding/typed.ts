// The examples' API in TypeScript: type-checked against the shipped declarations by
// test/package/install.test.ts (tsc --noEmit in a project that installed the tarball).
import { pipeline } from 'node:stream/promises';
import { createJury, juryStream, runStage, startJurySimulator, RecordError, type Judgement, type JuryConfigInput, type PositionedRecord, type StageSummary, type StreamResult } from 'reasoning-jury';

export async function judgeOne(configPath: string, record: unknown): Promise<'keep' | 'drop' | 'review' | 'dead'> {
  const jury = await createJury(configPath);
  try {
    const j: Judgement = await jury.judge(record, { signal: AbortSignal.timeout(60_000) });
    return j.decision.decision;
  } catch (err) {
    if (err instanceof RecordError) return 'dead';
    throw err;
  } finally {
    await jury.close();
  }
}

export async function streamAll(config: JuryConfigInput, records: AsyncIterable<unknown>): Promise<StreamResult[]> {
  const out: StreamResult[] = [];
  await pipeline(records, juryStream({ config, concurrency: 4, ordered: false }), async (results: AsyncIterable<StreamResult>) => {
    for await (const r of results) out.push(r);
  });
  return out;
}

export async function stage(records: AsyncIterable<PositionedRecord>): Promise<StageSummary> {
  const sim = await startJurySimulator();
  try {
    const config: JuryConfigInput = {
      endpoints: { sim: { base_url: sim.url } },
      jurors: [{ id: 'jury-0', endpoint: 'sim', model: 'sim-juror-a' }],
      mode: 'single',
    };
    return await runStage({ source: records, output: 'out', config });
  } finally {
    await sim.close();
  }
}
