import { LocalEngineError, type GenerateOptions, type Generation, type LocalEngine } from '../../src/llm/local/engine.js';

/** An engine that answers from a script, for tests of the layers around the real one. */
export function fakeEngine(reply: (o: GenerateOptions) => Partial<Generation> | LocalEngineError | Promise<Partial<Generation> | LocalEngineError> = () => ({})): LocalEngine & {
  calls: GenerateOptions[];
  closed: number;
} {
  const calls: GenerateOptions[] = [];
  const engine = {
    modelPath: '/models/fake.gguf',
    modelName: 'Fake 1M',
    contextSize: 2048,
    threads: 1,
    calls,
    closed: 0,
    async generate(o: GenerateOptions): Promise<Generation> {
      calls.push(o);
      const r = await reply(o);
      if (r instanceof LocalEngineError) throw r;
      return { content: '{"negatives":[]}', tokens_in: 120, tokens_out: 7, evaluated_in: 120, prompt_ms: 1, total_ms: 2, stop_reason: 'eogToken', ...r };
    },
    stats: () => ({ turns: calls.length, tokens_in: 0, evaluated_in: 0, tokens_out: 0, prompt_ms: 0, generate_ms: 0, queued: 0 }),
    async close() {
      engine.closed += 1;
    },
  };
  return engine;
}
