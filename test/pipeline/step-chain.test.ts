// The typed envelope progression (src/pipeline/envelope.ts): a chain accepts a step only after
// the ones that give what it needs (checked by `tsc -p tsconfig.test.json`: each line marked
// as an expected type error below must be one, or the type check fails), runs its steps in order,
// and no step under src/pipeline/steps/ needs a non-null assertion.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { defaultConfigInput, parseConfig } from '../../src/config/load.js';
import { type Admitted, type Derived, type Judged, type Segmented, type Step, StepChain } from '../../src/pipeline/envelope.js';
import { deriveStep } from '../../src/pipeline/steps/derive.js';
import { judgingSteps } from '../../src/pipeline/steps/index.js';
import { judgeStep } from '../../src/pipeline/steps/judge.js';
import { segmentStep } from '../../src/pipeline/steps/segment.js';

const config = parseConfig(defaultConfigInput());
const position = { source: 'file', unit: 'in.jsonl', offset: 7 };
const admitted: Admitted = { position, item: { position, ok: true, raw: { id: 'r1' } }, record: { id: 'r1', problem: 'p', steps: ['a.', 'b.'], meta: {} } };

/** Steps that record their order and add what their type says, without a jury. */
const trail: string[] = [];
const segment: Step<Admitted, Segmented> = { name: 'segment', run: (env) => (trail.push('segment'), { ...env, input: { id: env.record.id, problem: env.record.problem, steps: [] } }) };
const judge: Step<Segmented, Judged> = { name: 'judge', run: (env) => (trail.push('judge'), { ...env, verdict: { record_id: env.input.id } as Judged['verdict'] }) };
const derive: Step<Judged, Derived> = { name: 'derive', run: (env) => (trail.push('derive'), { ...env, rows: { record: env.verdict.record_id } as unknown as Derived['rows'] }) };

describe('step chain', () => {
  it('only in order: a step that needs what no earlier step gives does not compile', () => {
    const base = StepChain.from<Admitted>();
    // @ts-expect-error judging needs the segmented input
    base.then(judge);
    // @ts-expect-error deriving needs the verdict
    base.then(segment).then(derive);
    // @ts-expect-error the stage's real steps are checked the same way
    base.then(segmentStep(config)).then(deriveStep(config));
    // @ts-expect-error a chain that stops before derive is not what the stage runs
    const short: StepChain<Admitted, Derived> = base.then(segment).then(judge);
    expect(short).toBeDefined();
    const real: StepChain<Admitted, Derived> = base.then(segmentStep(config)).then(judgeStep({} as never)).then(deriveStep(config));
    expect(real.names).toEqual(['segment', 'judge', 'derive']);
    expect(judgingSteps({ config, jury: {} as never }).names).toEqual(['segment', 'judge', 'derive']);
  });

  it('runs the steps in order; optional steps only when given; a dead letter ends the chain; a step that throws is a dead letter', async () => {
    const noop: Step<Derived, Derived> = { name: 'taxonomy', run: (env) => (trail.push('taxonomy'), env) };
    const chain = StepChain.from<Admitted>().then(segment).then(judge).then(derive).thenIf(null).thenIf(noop);
    expect(chain.names).toEqual(['segment', 'judge', 'derive', 'taxonomy']);
    trail.length = 0;
    const out = await chain.run(admitted);
    expect(trail).toEqual(['segment', 'judge', 'derive', 'taxonomy']);
    expect(out.dead).toBeUndefined();
    expect(!out.dead && out.rows).toEqual({ record: 'r1' });

    const refuse: Step<Admitted, Segmented> = { name: 'segment', run: (env) => ({ ...env, dead: { source: 'file', source_unit: 'in.jsonl', source_offset: 7, error: 'segmentation: none', raw: '', raw_truncated: false } }) };
    trail.length = 0;
    const dead = await StepChain.from<Admitted>().then(refuse).then(judge).then(derive).run(admitted);
    expect(trail).toEqual([]);
    expect(dead.dead?.error).toBe('segmentation: none');

    const broken: Step<Segmented, Judged> = { name: 'judge', run: () => { throw new Error('boom'); } };
    const thrown = await StepChain.from<Admitted>().then(segment).then(broken).then(derive).run(admitted);
    expect(thrown.dead).toMatchObject({ error: 'internal error while judging: boom', source_offset: 7, raw: JSON.stringify(admitted.record) });
  });

  it('no step under src/pipeline/steps/ asserts a field with `!`', () => {
    const dir = join(process.cwd(), 'src', 'pipeline', 'steps');
    const found: string[] = [];
    for (const f of readdirSync(dir).filter((n) => n.endsWith('.ts'))) {
      const src = ts.createSourceFile(f, readFileSync(join(dir, f), 'utf8'), ts.ScriptTarget.Latest, true);
      const visit = (n: ts.Node): void => {
        if (ts.isNonNullExpression(n)) found.push(`${f}:${src.getLineAndCharacterOfPosition(n.getStart()).line + 1} ${n.getText()}`);
        ts.forEachChild(n, visit);
      };
      visit(src);
    }
    expect(found).toEqual([]);
  });
});
