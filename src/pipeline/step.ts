import type { Envelope } from './envelope.js';
import { fail } from './envelope.js';

/**
 * One small piece of work on a record (segment, judge, derive, assign taxonomy...). A step
 * takes the envelope and returns it with its own field filled, or with `dead` set.
 */
export interface PipelineStep {
  readonly name: string;
  run(env: Envelope): Envelope | Promise<Envelope>;
}

/**
 * Runs the steps in order until one sets `dead`. A step that throws is a bug, not bad input;
 * the record must not be lost to it, so it leaves as a dead letter that says so.
 */
export async function runSteps(steps: readonly PipelineStep[], start: Envelope): Promise<Envelope> {
  let env = start;
  for (const step of steps) {
    if (env.dead) return env;
    try {
      env = await step.run(env);
    } catch (err) {
      return fail(env, `internal error while judging: ${(err as Error).message}`, JSON.stringify(env.record));
    }
  }
  return env;
}
