/** Every provider fills finish_reason, mapped from what its server or engine says. */
import { afterEach, describe, expect, it } from 'vitest';
import { EndpointConfig } from '../../schemas/config.js';
import { toFinishReason } from '../../src/llm/finish-reason.js';
import { finishOf } from '../../src/llm/local-provider.js';
import { createOpenAIProvider } from '../../src/llm/openai-provider.js';
import type { ChatRequest } from '../../src/llm/types.js';
import { buildGoldIndex, createSimProvider } from '../../src/sim/index.js';
import { oneModel, phase1Request, synthRecords } from '../sim/helpers.js';
import { ok, startScriptedServer, type ScriptedServer } from './helpers/scripted-server.js';

describe('toFinishReason', () => {
  it('keeps our names, maps known aliases, and calls anything else other', () => {
    expect(['stop', 'length', 'content_filter', 'tool_calls', 'error', 'other'].map(toFinishReason)).toEqual(['stop', 'length', 'content_filter', 'tool_calls', 'error', 'other']);
    expect(['function_call', 'max_tokens', 'end_turn', 'STOP'].map(toFinishReason)).toEqual(['tool_calls', 'length', 'stop', 'stop']);
    expect([null, undefined, 7, 'abort', ''].map(toFinishReason)).toEqual(['other', 'other', 'other', 'other', 'other']);
  });
});

describe('openai provider', () => {
  let server: ScriptedServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('reads choices[0].finish_reason', async () => {
    const said = ['stop', 'length', 'content_filter', 'tool_calls', null];
    server = await startScriptedServer(said.map((f) => ok('x', { finish_reason: f })));
    const provider = createOpenAIProvider('t', EndpointConfig.parse({ base_url: server.url }), { env: {} });
    const req: ChatRequest = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
    const got = [];
    for (const _ of said) got.push((await provider.complete(req, new AbortController().signal)).finish_reason);
    await provider.close!();
    expect(got).toEqual(['stop', 'length', 'content_filter', 'tool_calls', 'other']);
  });
});

describe('local provider', () => {
  it("maps node-llama-cpp's stop reasons", () => {
    expect(['eogToken', 'stopGenerationTrigger', 'customStopTrigger', 'maxTokens', 'functionCalls', 'abort'].map(finishOf)).toEqual(['stop', 'stop', 'stop', 'length', 'tool_calls', 'other']);
  });
});

describe('simulator provider', () => {
  it('says stop, or length when max_tokens cut the reply, with the same content as before', async () => {
    const records = synthRecords(2);
    const sim = createSimProvider({ profile: oneModel({ recall: 1, reasoning_words: 0 }), gold: buildGoldIndex(records) });
    const req = phase1Request(records[0]!, 'm', 3);
    const never = new AbortController().signal;
    const full = await sim.complete(req, never);
    expect(full.finish_reason).toBe('stop');
    const cut = await sim.complete({ ...req, max_tokens: 5 }, never);
    expect(cut.finish_reason).toBe('length');
    expect(cut.content).toBe(full.content.slice(0, 20));
  });
});
