/**
 * One event per record that did not end clean: a dead letter or a missing verdict at warn, a
 * degraded verdict at debug, each with the record id and its position. A cause shared by many
 * records (an endpoint refusing every call) is written once per 10 s with a repeat count.
 */
import type { Logger } from '../util/log.js';
import { limitedLog } from '../util/repeat-limiter.js';
import type { Finished } from './envelope.js';

export interface RecordLog {
  finished(env: Finished): void;
  /** writes the repeat counts still held back */
  close(): void;
}

export function recordLog(log: Logger): RecordLog {
  const limited = limitedLog(log);
  return {
    finished(env) {
      const v = env.verdict;
      if (!env.dead && !v?.error && !(v?.degraded && log.enabled('debug'))) return;
      const at = { record_id: env.record?.id ?? v?.record_id, unit: env.position.unit, offset: env.position.offset };
      if (env.dead) limited.write('warn', `dead ${env.dead.error}`, `dead letter: ${env.dead.error}`, at);
      else if (v?.error) limited.write('warn', `no verdict ${v.error}`, `no verdict: ${v.error}`, at);
      else limited.write('debug', `degraded ${v?.degraded_reason}`, `degraded verdict: ${v?.degraded_reason ?? ''}`, at);
    },
    close: () => limited.close(),
  };
}
