/**
 * Faults of one call through the gateway, the real `openai` client and a local HTTP server
 * (issue 35): a reset on one record's request spends retries and ends, an oversized reply is
 * that call's failure, and the messages say what went wrong.
 */
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { EndpointConfig, ParticipantConfig } from '../../schemas/config.js';
import { JudgementOutput } from '../../schemas/defect.js';
import { createGateway, type Gateway } from '../../src/llm/gateway.js';
import { EndpointFaultError, EndpointOutageError } from '../../src/llm/outage.js';
import { completion } from './helpers/scripted-server.js';

type Handler = (body: Record<string, unknown>, res: import('node:http').ServerResponse) => void;
let server: Server | undefined;
let gw: Gateway | undefined;
afterEach(async () => {
  await gw?.close();
  server?.closeAllConnections();
  server?.close();
});

async function start(handle: Handler, endpoint: Record<string, unknown> = {}): Promise<{ gw: Gateway; seat: ParticipantConfig; hits: () => number }> {
  let hits = 0;
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'GET') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[]}');
      hits++;
      handle(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>, res);
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;
  gw = createGateway({ endpoints: { ep: EndpointConfig.parse({ base_url: url, max_retries: 3, backoff_base_ms: 5, backoff_max_ms: 10, ...endpoint }) }, prices: {}, cache: { enabled: false, dir: '/tmp/unused' }, auditLogPath: null });
  return { gw, seat: ParticipantConfig.parse({ id: 'j', endpoint: 'ep', model: 'm' }), hits: () => hits };
}

const VALID = '{"negatives": []}';
const judge = (g: Gateway, seat: ParticipantConfig, id: string) =>
  g.structured({ ctx: { record_id: id, phase: 'phase1', participant: 'j', caller: 't' }, seat, messages: [{ role: 'user', content: id }], schema: JudgementOutput, schemaName: 'JudgementOutput' });
const ok = (res: import('node:http').ServerResponse, content: string) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(completion({ content }, 'm')));

describe('faults of one call', () => {
  it('a connection reset on one record spends its retries and stops with one line naming the record, while others are judged', async () => {
    const { gw, seat, hits } = await start((body, res) => {
      const text = (body.messages as Array<{ content: string }>)[0]!.content;
      if (text === 'bad') return void res.socket?.destroy();
      ok(res, VALID);
    });
    const good = await Promise.all(['a', 'b', 'c'].map((id) => judge(gw, seat, id)));
    expect(good.every((r) => r.usage.outcome === 'ok')).toBe(true);
    const before = hits();
    const err = (await judge(gw, seat, 'bad').catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(EndpointFaultError);
    expect(err.message).toMatch(/^endpoint "ep" failed all 4 attempt\(s\) of seat "j" \(model "m"\) for record "bad" \(last error: connection error/);
    expect(hits() - before).toBe(4); // every attempt spent a retry: no loop
  });

  it('an endpoint that flaps (probe answers, every call reset) stays down and ends at the maximum outage, at the probe pace', async () => {
    const { seat, hits } = await start((_b, res) => void res.socket?.destroy(), { max_retries: 1000, breaker: { failures: 2, probe_interval_ms: 20, probe_max_interval_ms: 40 } });
    // The same server, with a short maximum outage.
    await gw!.close();
    const port = (server!.address() as { port: number }).port;
    gw = createGateway({ endpoints: { ep: EndpointConfig.parse({ base_url: `http://127.0.0.1:${port}/v1`, max_retries: 1000, backoff_base_ms: 1, backoff_max_ms: 2, breaker: { failures: 2, probe_interval_ms: 20, probe_max_interval_ms: 40 } }) }, prices: {}, cache: { enabled: false, dir: '/tmp/unused' }, auditLogPath: null, maxOutageMs: 400 });
    const err = (await Promise.all(['a', 'b', 'c'].map((id) => judge(gw!, seat, id))).catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(EndpointOutageError);
    // Waiting calls spend nothing and go one at a time as the trial: about one request per probe, not a hot loop.
    expect(hits()).toBeLessThan(40);
  });

  it('a reply over max_reply_bytes is that call\'s failure, read no further, and the endpoint stays up', async () => {
    const { gw, seat } = await start((_b, res) => ok(res, '{'.repeat(300_000)), { max_reply_bytes: 100_000, max_retries: 0 });
    const err = (await judge(gw, seat, 'x').catch((e: unknown) => e)) as Error;
    expect(err).not.toBeInstanceOf(EndpointFaultError);
    expect(err.message).toMatch(/the reply was larger than 100000 bytes; reading stopped there \(endpoints\.ep\.max_reply_bytes\)/);
    expect(gw.health.endpoints()[0]).toMatchObject({ state: 'up', failures: 0 });
  });

  it('a context-length 400 says the prompt is too long, not to drop "messages"', async () => {
    const { gw, seat } = await start((_b, res) => res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: "This model's maximum context length is 4096 tokens. However, your messages resulted in 9000 tokens.", type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } })));
    const err = (await judge(gw, seat, 'x').catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(/the prompt is too long for the model's context window/);
    expect(err.message).not.toMatch(/drop the field/);
  });

  it('an HTML page with 200 says the body is not JSON, not "no choices"', async () => {
    const { gw, seat } = await start((_b, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!DOCTYPE html><html><body>login</body></html>'), { max_retries: 0 });
    const err = (await judge(gw, seat, 'x').catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(/a body that is not JSON \(HTML, starting "<!DOCTYPE html>/);
    expect(err.message).not.toMatch(/no choices/);
  });

  it('a rejected max_tokens suggests the other max_tokens_field value, never auto', async () => {
    const { gw, seat } = await start((_b, res) => res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", type: 'invalid_request_error', param: 'max_tokens', code: 'unsupported_parameter' } })));
    const err = (await judge(gw, seat, 'x').catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(/change endpoints\.ep\.max_tokens_field to max_completion_tokens/);
    expect(err.message).not.toMatch(/auto/);
  });
});
