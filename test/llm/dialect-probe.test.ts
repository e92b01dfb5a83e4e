/**
 * `response_format: auto` in the provider and the gateway: one probe per endpoint shared by all
 * its seats, a transport failure during the probe is an outage and not a verdict, configured
 * dialects never probe, free-text calls neither probe nor carry a format.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EndpointConfig, ParticipantConfig } from '../../schemas/config.js';
import { JudgementOutput } from '../../schemas/defect.js';
import { PROBE_PROMPT } from '../../src/llm/dialect-probe.js';
import { dialectFields } from '../../src/llm/dialect.js';
import { createGateway, type Gateway } from '../../src/llm/gateway.js';
import { configureLogging } from '../../src/util/log.js';
import { ok, startScriptedServer, type RecordedRequest, type Reply, type ScriptedServer } from './helpers/scripted-server.js';

let server: ScriptedServer | undefined;
let gw: Gateway | undefined;
let logLines: string[] = [];
beforeEach(() => {
  logLines = [];
  configureLogging({ format: 'text', debug: false }, (l) => logLines.push(l));
});
afterEach(async () => {
  configureLogging({ format: 'text', debug: false });
  await gw?.close();
  await server?.close();
  gw = undefined;
  server = undefined;
});

const isProbe = (r: RecordedRequest) => (r.body.messages as Array<{ content: string }>)[0]?.content === PROBE_PROMPT;
const chosenLines = () => logLines.filter((l) => l.includes('response_format auto chose'));

/** An OpenAI-like server: json_schema works; `first` may replace the answers to the first requests. */
function openaiLike(first: Reply[] = []) {
  return (r: RecordedRequest): Reply => {
    if (r.n <= first.length) return first[r.n - 1]!;
    return isProbe(r) ? ok('{"ok": true}') : ok('{"negatives":[]}');
  };
}

async function gateway(script: (r: RecordedRequest) => Reply, endpoint: Record<string, unknown>, auditLogPath: string | null = null) {
  server = await startScriptedServer(script);
  const config = EndpointConfig.parse({ base_url: server.url, timeout_ms: 5000, backoff_base_ms: 1, backoff_max_ms: 5, ...endpoint });
  gw = createGateway({ endpoints: { ep: config }, prices: {}, cache: { enabled: false, dir: '/tmp/unused' }, auditLogPath });
  return gw;
}

const seat = (id: string, model: string) => ParticipantConfig.parse({ id, endpoint: 'ep', model });
const structured = (g: Gateway, s: ParticipantConfig, i: number) =>
  g.structured({ ctx: { record_id: `r${i}`, phase: 'phase1', participant: s.id, caller: 't' }, seat: s, messages: [{ role: 'user', content: 'judge' }], schema: JudgementOutput, schemaName: 'JudgementOutput' });

describe('response_format auto', () => {
  it('probes once per endpoint, shared by every seat and model on it', async () => {
    const g = await gateway(openaiLike(), { response_format: 'auto', max_concurrency: 4 });
    const seats = [seat('a', 'model-a'), seat('b', 'model-b'), seat('c', 'model-c')];
    const results = await Promise.all(Array.from({ length: 9 }, (_, i) => structured(g, seats[i % 3]!, i)));
    expect(results.every((r) => r.usage.outcome === 'ok')).toBe(true);
    expect(server!.requests.filter(isProbe)).toHaveLength(1);
    expect(server!.requests[0]!.body).toMatchObject({ max_tokens: 32, ...dialectFields('json_schema', { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'], additionalProperties: false }) });
    const calls = server!.requests.filter((r) => !isProbe(r));
    expect(calls).toHaveLength(9);
    for (const c of calls) expect((c.body.response_format as { type: string }).type).toBe('json_schema');
    expect(chosenLines()).toEqual([expect.stringContaining('endpoint "ep": response_format auto chose json_schema')]);
  });

  it('a probe answered 503 is no verdict: the call is retried, the probe runs again and picks json_schema', async () => {
    const g = await gateway(openaiLike([{ status: 503, body: { error: { message: 'Loading model', type: 'unavailable_error' } } }]), { response_format: 'auto', max_retries: 2 });
    const r = await structured(g, seat('a', 'm'), 0);
    expect(r.usage.outcome).toBe('ok');
    expect(r.usage.attempts).toBe(2);
    expect(server!.requests.map((x) => [isProbe(x), (x.body.response_format as { type?: string } | undefined)?.type])).toEqual([
      [true, 'json_schema'],
      [true, 'json_schema'],
      [false, 'json_schema'],
    ]);
    expect(chosenLines()).toHaveLength(1);
  });

  it("the audit line of a structured call names the dialect the probe chose, not `auto`", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rj-probe-audit-'));
    const auditPath = join(dir, 'audit.jsonl');
    const g = await gateway(openaiLike([{ status: 400, body: { error: { message: 'bad', param: 'response_format.type', code: 'invalid_value' } } }]), { response_format: 'auto' }, auditPath);
    await structured(g, seat('a', 'm'), 0);
    await g.close();
    gw = undefined;
    const lines = (await readFile(auditPath, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { sampling: { response_format: string } });
    expect(lines.map((l) => l.sampling.response_format)).toEqual(['json_object_schema']);
    await rm(dir, { recursive: true, force: true });
  });

  it('a probe that times out is no verdict either', async () => {
    const g = await gateway(openaiLike([{ hang: true }]), { response_format: 'auto', max_retries: 2, timeout_ms: 300 });
    const r = await structured(g, seat('a', 'm'), 0);
    expect(r.usage.outcome).toBe('ok');
    expect(server!.requests.filter(isProbe)).toHaveLength(2);
    expect(chosenLines()[0]).toContain('chose json_schema');
  });

  it('a probe refused for a field that is not the format is no dialect verdict: the call fails once, naming the probe and the setting', async () => {
    const refuse: Reply = { status: 400, body: { error: { message: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", type: 'invalid_request_error', param: 'max_tokens', code: 'unsupported_parameter' } } };
    const g = await gateway(() => refuse, { response_format: 'auto', max_retries: 3 });
    const err = (await structured(g, seat('a', 'm'), 0).catch((e: unknown) => e)) as Error;
    expect(err.message).toContain('failed after 1 attempt(s)');
    expect(err.message).toContain('request field "max_tokens" of the response_format auto probe (not retried); set endpoints.ep.response_format');
    expect(server!.requests).toHaveLength(1);
    // The probe sends no sampling knobs of its own beyond its small budget.
    expect(server!.requests[0]!.body).not.toHaveProperty('temperature');
    expect(chosenLines()).toEqual([]);
  });

  it('free-text calls neither probe nor carry a format', async () => {
    const g = await gateway(() => ok('plain prose'), { response_format: 'auto' });
    const s = seat('a', 'm');
    const r = await g.text({ ctx: { record_id: 'r', phase: 'juror_turn', participant: 'a', caller: 't' }, seat: s, messages: [{ role: 'user', content: 'argue' }] });
    expect(r.value).toBe('plain prose');
    expect(server!.requests).toHaveLength(1);
    expect(server!.requests[0]!.body).not.toHaveProperty('response_format');
    expect(server!.requests[0]!.body).not.toHaveProperty('guided_json');
    expect(chosenLines()).toEqual([]);
  });

  it.each(['json_schema', 'json_object_schema', 'guided_json', 'json_object', 'none'] as const)('a configured %s never probes and sends the schema in that dialect', async (d) => {
    const g = await gateway(() => ok('{"negatives":[]}'), { response_format: d });
    await structured(g, seat('a', 'm'), 0);
    expect(server!.requests).toHaveLength(1);
    const body = server!.requests[0]!.body;
    const schema = (body.guided_json ?? (body.response_format as { schema?: unknown; json_schema?: { schema?: unknown } } | undefined)?.schema ?? (body.response_format as { json_schema?: { schema?: unknown } } | undefined)?.json_schema?.schema) as Record<string, unknown> | undefined;
    const expected = schema ? dialectFields(d, schema) : dialectFields(d, {});
    for (const [k, v] of Object.entries(expected)) expect(body[k]).toEqual(v);
    if (d === 'none') expect(body).not.toHaveProperty('response_format');
    if (d !== 'none' && d !== 'json_object') expect(schema).toMatchObject({ type: 'object', required: expect.arrayContaining(['negatives']) });
  });
});
