// kafkajs log entries through our logger: named levels, `kafka.<namespace>` components, and
// bursts of identical entries (a refused connection, retried) written once with a count.
import { Kafka, logLevel, type LogEntry } from 'kafkajs';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { kafkaLogCreator, kafkaLogEvent } from '../../connectors/kafka/kafkajs-client.js';
import { lineLogger } from '../../src/util/log.js';
import { limitedLog, RepeatLimiter } from '../../src/util/repeat-limiter.js';
import { waitForProgress } from '../helpers/progress.js';

const entry = (label: string, level: logLevel, namespace: string, log: Record<string, unknown>): LogEntry => ({ label, level, namespace, log: { timestamp: '2026-01-01T00:00:00.000Z', logger: 'kafkajs', message: '', ...log } });

describe('kafkaLogEvent', () => {
  it('maps each kafkajs level to its name, never to a number', () => {
    const levels = [entry('ERROR', logLevel.ERROR, 'Connection', {}), entry('WARN', logLevel.WARN, 'Runner', {}), entry('INFO', logLevel.INFO, 'ConsumerGroup', {}), entry('DEBUG', logLevel.DEBUG, 'Connection', {})].map((e) => kafkaLogEvent(e).level);
    expect(levels).toEqual(['error', 'warn', 'info', 'debug']);
    // A label kafkajs might add later still gets a name, from the number.
    expect(kafkaLogEvent(entry('', logLevel.WARN, 'X', {})).level).toBe('warn');
  });

  it('keeps the namespace, the broker as endpoint and the group/topic/partition; the stack only when asked', () => {
    const e = entry('ERROR', logLevel.ERROR, 'Connection', { message: 'Connection error: connect ECONNREFUSED 127.0.0.1:1', broker: '127.0.0.1:1', clientId: 'rj', stack: 'Error: connect\n    at x', groupId: 'g', topic: 't', partition: 3 });
    const ev = kafkaLogEvent(e);
    expect(ev).toMatchObject({ level: 'error', namespace: 'Connection', msg: 'Connection error: connect ECONNREFUSED 127.0.0.1:1' });
    expect(ev.fields).toEqual({ endpoint: '127.0.0.1:1', group: 'g', topic: 't', partition: 3 });
    expect(kafkaLogEvent(e, true).fields.stack).toMatch(/at x/);
    // An `error` text the message lacks is appended.
    expect(kafkaLogEvent(entry('ERROR', logLevel.ERROR, 'Runner', { message: 'Crash', error: 'The coordinator is not aware of this member' })).msg).toBe('Crash (The coordinator is not aware of this member)');
  });

  it('group membership chatter (rebalancing, stale generation, rejoin) is info; other errors stay errors', () => {
    const rebalancing = entry('ERROR', logLevel.ERROR, 'Connection', { message: 'Response Heartbeat(key: 12, version: 3)', error: 'The group is rebalancing, so a rejoin is needed', broker: 'b:9092' });
    expect(kafkaLogEvent(rebalancing).level).toBe('info');
    expect(kafkaLogEvent(entry('WARN', logLevel.WARN, 'Runner', { message: 'The group is rebalancing, re-joining' })).level).toBe('info');
    expect(kafkaLogEvent(entry('ERROR', logLevel.ERROR, 'Connection', { message: 'Response OffsetCommit(key: 8, version: 5)', error: 'Specified group generation id is not valid' })).level).toBe('info');
    expect(kafkaLogEvent(entry('ERROR', logLevel.ERROR, 'Runner', { message: 'The coordinator is not aware of this member, re-joining the group' })).level).toBe('info');
    expect(kafkaLogEvent(entry('ERROR', logLevel.ERROR, 'Connection', { message: 'Response Fetch(key: 1, version: 11)', error: 'Not authorized to access topics: [Topic authorization failed]' })).level).toBe('error');
  });

  it('the log creator writes through the logger, redacted, and holds back identical entries', () => {
    let t = 0;
    const lines: string[] = [];
    const log = lineLogger((l) => lines.push(l), 'kafka');
    const write = kafkaLogCreator(log, limitedLog(log, new RepeatLimiter(10_000, () => t)), (s) => s.replace('hunter2', '[REDACTED]'))();
    const refused = entry('ERROR', logLevel.ERROR, 'Connection', { message: 'Connection error: connect ECONNREFUSED b:9092 (pw hunter2)', broker: 'b:9092' });
    for (let i = 0; i < 39; i++) write(refused);
    write(entry('WARN', logLevel.WARN, 'Consumer', { message: 'Restarting the consumer in 300ms' }));
    t = 10_000;
    write(entry('WARN', logLevel.WARN, 'Consumer', { message: 'Restarting the consumer in 300ms' }));
    expect(lines).toEqual([
      'reasoning-jury: kafka.Connection: error: Connection error: connect ECONNREFUSED b:9092 (pw [REDACTED])\n',
      'reasoning-jury: kafka.Consumer: warn: Restarting the consumer in 300ms\n',
      'reasoning-jury: kafka.Connection: error: Connection error: connect ECONNREFUSED b:9092 (pw [REDACTED]) (repeated 38 more times in the last 10 s)\n',
      'reasoning-jury: kafka.Consumer: warn: Restarting the consumer in 300ms\n',
    ]);
  });
});

describe('a real kafkajs client against a closed port', () => {
  it('writes each repeated connection error once, then a summary with the count kafkajs retried', async () => {
    // A port that was free a moment ago: connecting is refused.
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const lines: string[] = [];
    const seen: LogEntry[] = [];
    const log = lineLogger((l) => lines.push(l), 'kafka');
    const limited = limitedLog(log, new RepeatLimiter(500));
    const inner = kafkaLogCreator(log, limited)();
    const kafka = new Kafka({
      clientId: 'rj-log-test',
      brokers: [`127.0.0.1:${port}`],
      retry: { retries: 4, initialRetryTime: 20, maxRetryTime: 60 },
      logLevel: logLevel.WARN,
      logCreator: () => (e) => (seen.push(e), inner(e)),
    });
    const admin = kafka.admin();
    await expect(admin.connect()).rejects.toThrow(/ECONNREFUSED/);
    // The burst is over; its summaries follow within a window or two.
    await waitForProgress(() => ({ done: lines.some((l) => l.includes('repeated')), progress: lines.length }), { what: 'the repeat summary', pollMs: 50 });
    limited.close();
    const refused = seen.filter((e) => e.namespace === 'Connection');
    expect(refused.length).toBeGreaterThan(2);
    const written = lines.filter((l) => l.startsWith('reasoning-jury: kafka.Connection: error: Connection error: connect ECONNREFUSED'));
    expect(written.length).toBeLessThan(refused.length);
    // Every refused attempt is accounted for: written, or counted in a summary.
    const counted = written.reduce((n, l) => n + (/repeated (\d+) more/.exec(l) ? Number(/repeated (\d+) more/.exec(l)![1]) : 1), 0);
    expect(counted).toBe(refused.length);
    expect(lines.every((l) => !/kafka\] \d|: \d+ Connection/.test(l))).toBe(true);
  });
});
