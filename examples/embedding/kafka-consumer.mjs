// Example 2 (docs/embedding.md): a kafkajs consumer you already run feeds juryStream; results go
// to your own sink (here: JSONL on stdout). The consumer waits while the jury is full, so the
// topic is read only as fast as it is judged.
//   KAFKA_BROKERS=127.0.0.1:9092 node kafka-consumer.mjs <topic> [group] [max-records] [jury.yaml]
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel } from 'kafkajs';
import { juryStream } from 'reasoning-jury';

const [topic, groupId = 'jury-example', max = 'Infinity', config = fileURLToPath(new URL('jury.yaml', import.meta.url))] = process.argv.slice(2);
if (!topic) throw new Error('usage: node kafka-consumer.mjs <topic> [group] [max-records] [jury.yaml]');
const limit = Number(max);

const kafka = new Kafka({ clientId: 'jury-example', brokers: (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(','), logLevel: logLevel.NOTHING });
const consumer = kafka.consumer({ groupId });
const jury = juryStream({ config, concurrency: 8, ordered: false });

// The reader: your sink. It ends the consumer once `limit` results are out.
const reading = (async () => {
  let n = 0;
  for await (const r of jury) {
    process.stdout.write(`${JSON.stringify(r.ok ? { id: r.verdict.record_id, decision: r.decision.decision } : { dead_letter: r.reason })}\n`);
    if (++n >= limit) break;
  }
  await consumer.disconnect();
  return n;
})();

await consumer.connect();
await consumer.subscribe({ topic, fromBeginning: true });
await consumer.run({
  eachMessage: async ({ message }) => {
    let record;
    try {
      record = JSON.parse(message.value.toString('utf8'));
    } catch {
      record = message.value.toString('utf8'); // comes out as a dead letter
    }
    // Backpressure: the next message is not taken until the jury has room for this one.
    if (!jury.write(record)) await once(jury, 'drain');
  },
});
const n = await reading;
console.error(`judged ${n} records from ${topic}`);
