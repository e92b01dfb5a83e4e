/**
 * Preflight: before a run reads any input, one tiny real call per distinct (endpoint, model)
 * through the same attempt layers as the jury's calls (retries, health, limits, audit), with the
 * seat's own sampling fields and its endpoint's structured-output dialect. A refused key, an
 * unknown model or a field the server will not take stops the run here, with one line, instead
 * of in every record's verdict.
 */
import { PROBE_MAX_TOKENS, PROBE_SCHEMA } from './dialect-probe.js';
import { preflightRefused } from './fault-message.js';
import { newMeter } from './layers/usage.js';
import type { EndpointHandle } from './model.js';
import { isEndpointOutage } from './outage.js';
import { PROBE_PROMPT, ProviderError, type ChatRequest, type ParticipantConfig } from './types.js';

export type RequestBuilder = (seat: ParticipantConfig, maxTokens: number, messages: ChatRequest['messages'], jsonSchema: Record<string, unknown>) => ChatRequest;

/** Resolves once every distinct (endpoint, model) of `seats` answered; else throws the first fault as its one line. */
export async function preflight(seats: readonly ParticipantConfig[], endpoint: (name: string) => EndpointHandle, build: RequestBuilder, signal: AbortSignal): Promise<void> {
  const first = new Map<string, ParticipantConfig>();
  for (const s of seats) if (!first.has(`${s.endpoint}\u0000${s.model}`)) first.set(`${s.endpoint}\u0000${s.model}`, s);
  await Promise.all([...first.values()].map((seat) => check(seat, endpoint(seat.endpoint), build, signal)));
}

async function check(seat: ParticipantConfig, ep: EndpointHandle, build: RequestBuilder, signal: AbortSignal): Promise<void> {
  const req = build(seat, PROBE_MAX_TOKENS, [{ role: 'user', content: PROBE_PROMPT }], PROBE_SCHEMA);
  const call = { ctx: { record_id: '(preflight)', phase: 'phase1' as const, participant: seat.id, caller: 'preflight' }, seat, kind: 'preflight', meter: newMeter() };
  try {
    // Any reply will do, cut or not: the server took the key, the model and every field.
    await ep.turn(req, { call, turn: 'initial', signal });
  } catch (err) {
    if (isEndpointOutage(err) || !(err instanceof ProviderError) || signal.aborted) throw err;
    throw preflightRefused(ep.name, seat, err.message);
  }
}
