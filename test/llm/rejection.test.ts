/**
 * Replies that reject a request field: recognised in the shapes real servers send, never retried
 * (one attempt even for a 500), never counted as an outage, and the error names the field and
 * the setting that sends it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { EndpointConfig, ParticipantConfig } from '../../schemas/config.js';
import { JudgementOutput } from '../../schemas/defect.js';
import { createGateway, type Gateway } from '../../src/llm/gateway.js';
import { outageKindOf } from '../../src/llm/outage.js';
import { createOpenAIProvider } from '../../src/llm/openai-provider.js';
import { RejectedFieldError, rejectedField, settingFor, type ErrorReply } from '../../src/llm/rejection.js';
import { ModelCallError, ProviderError } from '../../src/llm/types.js';
import { startScriptedServer, type Reply, type ScriptedServer } from './helpers/scripted-server.js';

const pydantic500 =
  '{"error":{"message":"[{\'type\': \'literal_error\', \'loc\': (\'body\', \'response_format\', \'type\'), \'msg\': \\"Input should be \'text\' or \'json_object\'\\", \'input\': \'json_schema\'}]","type":"internal_server_error","param":null,"code":null}}';

describe('rejectedField: what servers say about a field they will not take', () => {
  const cases: Array<[string, ErrorReply, string | null]> = [
    ['OpenAI param', { status: 400, message: "400 Invalid value: 'x'.", param: 'response_format.type' }, 'response_format.type'],
    ['OpenAI unsupported parameter', { status: 400, message: "400 Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", param: null }, 'max_tokens'],
    ['llama-cpp-python 500 (pydantic repr)', { status: 500, message: 'x', body: pydantic500 }, 'response_format.type'],
    ['FastAPI 422 (JSON loc)', { status: 422, message: '422 status code (no body)', body: '{"detail":[{"type":"extra_forbidden","loc":["body","response_format","schema"],"msg":"Extra inputs are not permitted"}]}' }, 'response_format.schema'],
    ['pydantic top-level extra', { status: 400, message: 'x', body: "[{'type': 'extra_forbidden', 'loc': ('body', 'guided_json'), 'msg': 'Extra inputs are not permitted'}]" }, 'guided_json'],
    ['unrecognized argument', { status: 400, message: '400 Unrecognized request argument supplied: guided_json' }, 'guided_json'],
    ['llama.cpp plain text 500', { status: 500, message: '500 response_format type must be one of "text" or "json_object", but got: json_schema' }, 'response_format'],
    ['OOM is the server\'s own trouble', { status: 500, message: '500 CUDA error: out of memory' }, null],
    ['loading model', { status: 503, message: '503 Loading model', body: '{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}' }, null],
    ['a 5xx param is not evidence', { status: 500, message: '500 internal error', param: 'messages' }, null],
    ['rate limited, whatever it says', { status: 429, message: "429 Unsupported parameter: 'x'" }, null],
    ['unknown model', { status: 404, message: "404 The model 'x' does not exist" }, null],
    ['gateway HTML', { status: 502, message: '502 <html><body>Bad Gateway</body></html>' }, null],
  ];
  it.each(cases)('%s', (_name, reply, field) => {
    expect(rejectedField(reply)).toBe(field);
  });

  it('names the setting that sends the field', () => {
    expect(settingFor('local', 'response_format.type', undefined)).toBe('endpoints.local.response_format');
    expect(settingFor('local', 'guided_json', undefined)).toBe('endpoints.local.response_format');
    // Every call carries a budget (a default per kind), so what can change is the field's name.
    expect(settingFor('local', 'max_tokens', undefined)).toBe('endpoints.local.max_tokens_field');
    expect(settingFor('local', 'temperature', undefined)).toBe("the seat's temperature");
    expect(settingFor('local', 'response_format', { response_format: { type: 'json_object' } })).toBe("the seat's extra_body.response_format");
    expect(settingFor('local', 'logprobs', { logprobs: true })).toBe("the seat's extra_body.logprobs");
  });
});

describe('a rejected field through the gateway', () => {
  let server: ScriptedServer | undefined;
  let gw: Gateway | undefined;
  afterEach(async () => {
    await gw?.close();
    await server?.close();
    gw = undefined;
    server = undefined;
  });

  async function gateway(reply: Reply, endpoint: Record<string, unknown>) {
    server = await startScriptedServer(() => reply);
    const config = EndpointConfig.parse({ base_url: server.url, timeout_ms: 5000, max_retries: 4, backoff_base_ms: 1, backoff_max_ms: 2, breaker: { failures: 2, probe_interval_ms: 10, probe_max_interval_ms: 20 }, ...endpoint });
    gw = createGateway({ endpoints: { ep: config }, prices: {}, cache: { enabled: false, dir: '/tmp/unused' }, auditLogPath: null });
    return gw;
  }
  const call = (g: Gateway, seat: Record<string, unknown> = {}, i = 0) =>
    g.structured({
      ctx: { record_id: `r${i}`, phase: 'phase1', participant: 'j', caller: 't' },
      seat: ParticipantConfig.parse({ id: 'j', endpoint: 'ep', model: 'm', ...seat }),
      messages: [{ role: 'user', content: 'judge' }],
      schema: JudgementOutput,
      schemaName: 'JudgementOutput',
    });

  it("llama-cpp-python's 500 is tried once per call, names endpoints.ep.response_format, and never marks the endpoint down", async () => {
    const g = await gateway({ status: 500, body: pydantic500 }, { response_format: 'json_schema' });
    for (let i = 0; i < 5; i++) {
      const err = await call(g, {}, i).then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(ModelCallError);
      expect((err as Error).message).toMatch(/failed after 1 attempt\(s\): HTTP 500: the server rejected request field "response_format\.type" \(not retried\); change endpoints\.ep\.response_format/);
      expect((err as Error).message).toContain("Input should be 'text' or 'json_object'");
    }
    expect(server!.requests).toHaveLength(5);
    // Five 500s in a row with a breaker threshold of 2: still up, none was an outage.
    expect(g.health.endpoints()[0]).toMatchObject({ state: 'up', outages: 0 });
  });

  it('a refused max_tokens names the endpoint setting that renames it', async () => {
    const g = await gateway(
      { status: 400, body: { error: { message: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", type: 'invalid_request_error', param: 'max_tokens', code: 'unsupported_parameter' } } },
      {},
    );
    const err = (await call(g, { max_tokens: 100 }).catch((e: unknown) => e)) as Error;
    expect(err.message).toContain('failed after 1 attempt(s)');
    expect(err.message).toContain(`request field "max_tokens"`);
    expect(err.message).toContain('change endpoints.ep.max_tokens_field');
    expect(server!.requests).toHaveLength(1);
  });

  it('max_tokens_field: max_completion_tokens sends the budget under that name only', async () => {
    const g = await gateway({ content: '{"negatives": []}' }, { max_tokens_field: 'max_completion_tokens' });
    await call(g, { max_tokens: 100 });
    const sent = server!.requests[0]!.body;
    expect(sent.max_completion_tokens).toBe(100);
    expect(sent).not.toHaveProperty('max_tokens');
  });

  it('a 5xx that names no field is still retried and still an outage', async () => {
    const g = await gateway({ status: 500, body: { error: { message: 'CUDA error: out of memory', type: 'server_error' } } }, { max_retries: 1, breaker: { failures: 100, probe_interval_ms: 10, probe_max_interval_ms: 20 } });
    const err = (await call(g).catch((e: unknown) => e)) as Error;
    // Every attempt failed on the endpoint's side: a stop of the run, never the record's failure.
    expect(err.message).toContain('failed all 2 attempt(s)');
    expect(server!.requests).toHaveLength(2);
  });
});

describe('the provider: a typed error', () => {
  it('is a RejectedFieldError (a ProviderError, not retryable, no outage) with field and setting', async () => {
    const server = await startScriptedServer(() => ({ status: 422, body: { detail: [{ type: 'literal_error', loc: ['body', 'response_format', 'type'], msg: "Input should be 'text' or 'json_object'" }] } }));
    const provider = createOpenAIProvider('llm', EndpointConfig.parse({ base_url: server.url, response_format: 'json_schema' }));
    try {
      const err = await provider.complete({ model: 'm', messages: [{ role: 'user', content: 'x' }], json_schema: { type: 'object' } }, new AbortController().signal).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RejectedFieldError);
      expect(err).toBeInstanceOf(ProviderError);
      const r = err as RejectedFieldError;
      expect(r).toMatchObject({ retryable: false, status: 422, field: 'response_format.type', setting: 'endpoints.llm.response_format' });
      // The FastAPI body has no `error` member, so the client alone would have said "no body".
      expect(r.message).toContain("Input should be 'text' or 'json_object'");
      expect(outageKindOf(r)).toBeNull();
    } finally {
      await provider.close?.();
      await server.close();
    }
  });
});
