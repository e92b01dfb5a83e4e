/**
 * Entry of the Kafka connector: `kafka://topic[,topic][?group=id]`, a consumer group's
 * partitions as the input, resumed from the group's offsets; the verdict-events and dead-letter
 * topics, when configured, as sinks. connectors/kafka/ (and kafkajs) loads only when opened.
 */
import { registerInput } from '../src/pipeline/connector.js';

registerInput({
  scheme: 'kafka',
  help: 'kafka://topic[,topic][?group=id]',
  place: 'stream',
  resumesFromGroup: true,
  unbounded: 'a kafka:// topic has no end to count; estimate a file, folder or s3:// prefix holding a sample of it',
  async open(url, ctx) {
    const [{ openKafkaInput, kafkaSourceSetup }, { claimOutputForGroup }] = await Promise.all([import('./kafka/input.js'), import('./kafka/group-marker.js')]);
    const input = await openKafkaInput(url, ctx.config.kafka);
    // One consumer group per output: another group's instances would race on every range.
    const warning = await claimOutputForGroup(ctx.store, ctx.location ?? 'the output', input.group, input.topics, ctx.allowOtherGroup === true);
    if (warning) input.log.warn(warning);
    const setup = kafkaSourceSetup(input, ctx.store, ctx);
    await setup.source.start().catch(async (err: unknown) => {
      await setup.close();
      throw err;
    });
    return { source: setup.source, sinks: setup.sinks, sequentialUnits: false, resumesFromGroup: true, close: setup.close };
  },
});
