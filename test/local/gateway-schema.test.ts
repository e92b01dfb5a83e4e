import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EndpointConfig, ParticipantConfig } from '../../schemas/config.js';
import { JudgementOutput } from '../../schemas/defect.js';
import { createGateway } from '../../src/llm/gateway.js';
import type { ChatRequest, Provider } from '../../src/llm/types.js';

/** The gateway hands each structured call's JSON Schema to the provider (the local engine's grammar). */
describe('gateway: json_schema for constrained decoding', () => {
  function setup(reply: string) {
    const seen: ChatRequest[] = [];
    const provider: Provider = {
      name: 'capture',
      async complete(req) {
        seen.push(structuredClone(req));
        return { content: reply, tokens_in: 10, tokens_out: 2 };
      },
    };
    const gw = createGateway({
      endpoints: { laptop: EndpointConfig.parse({ kind: 'local', model_path: 'm.gguf' }) },
      prices: {},
      cache: { enabled: true, dir: join(mkdtempSync(join(tmpdir(), 'rj-gws-')), 'cache') },
      auditLogPath: null,
      providerFor: () => provider,
    });
    const seat = ParticipantConfig.parse({ id: 'j', endpoint: 'laptop', model: 'small', seed: 4 });
    const ctx = { record_id: 'r', phase: 'phase1' as const, participant: 'j', caller: 'test' };
    return { gw, seen, seat, ctx };
  }

  it('fills json_schema from the zod schema for structured calls only, re-asks included', async () => {
    const { gw, seen, seat, ctx } = setup('{"negatives":[]}');
    await gw.structured({ ctx, seat, messages: [{ role: 'user', content: 'audit' }], schema: JudgementOutput, schemaName: 'JudgementOutput' });
    await gw.text({ ctx: { ...ctx, sample_index: 1 }, seat, messages: [{ role: 'user', content: 'free text' }] });
    expect(seen[0]!.json_schema).toMatchObject({ type: 'object', properties: { negatives: { type: 'array' } }, required: ['negatives'] });
    expect(seen[1]!.json_schema).toBeUndefined();
    await gw.close();

    const bad = setup('not json at all');
    await expect(bad.gw.structured({ ctx, seat, messages: [{ role: 'user', content: 'audit' }], schema: JudgementOutput, schemaName: 'JudgementOutput' })).rejects.toThrow(/re-ask/);
    expect(bad.seen).toHaveLength(2);
    expect(bad.seen[1]!.json_schema).toEqual(bad.seen[0]!.json_schema);
    await bad.gw.close();
  });

  it('still replays a structured call from the response cache', async () => {
    const { gw, seen, seat, ctx } = setup('{"negatives":[]}');
    const call = () => gw.structured({ ctx, seat, messages: [{ role: 'user', content: 'audit' }], schema: JudgementOutput, schemaName: 'JudgementOutput' });
    expect((await call()).cached).toBe(false);
    expect((await call()).cached).toBe(true);
    expect(seen).toHaveLength(1);
    await gw.close();
  });
});
