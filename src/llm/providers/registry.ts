/**
 * Provider kinds by endpoint `kind` (endpoints.<name>.kind in the config): each kind's module
 * in this folder registers how an endpoint of that kind is served, and index.ts imports each
 * module once. The runtime (src/compose/runtime.ts) looks a kind up here instead of branching
 * on it, so a new kind is its module, one line in index.ts and its name in the config's `kind`
 * enum (schemas/config.ts, the contract docs/config.md is generated from). docs/extending.md
 * walks through it.
 */
import type { EndpointConfig } from '../../../schemas/config.js';
import type { Provider } from '../types.js';

export type EndpointKind = EndpointConfig['kind'];

export interface ProviderKind {
  kind: EndpointKind;
  /** the provider that serves one endpoint of this kind; heavy code loads on its first call */
  create(name: string, endpoint: EndpointConfig): Provider;
  /**
   * The endpoint's settings as the gateway gets them (a local model's name resolved to its
   * file); runs once when the runtime opens, so a mistake there stops the command before any call.
   */
  prepare?(name: string, endpoint: EndpointConfig): EndpointConfig;
  /** sends the key named by api_key_env: an unset variable is warned about at start */
  sendsKey?: boolean;
}

const kinds = new Map<EndpointKind, ProviderKind>();

export function registerProviderKind(k: ProviderKind): void {
  if (kinds.has(k.kind)) throw new Error(`two providers registered for endpoint kind "${k.kind}"`);
  kinds.set(k.kind, k);
}

export function providerKind(kind: EndpointKind): ProviderKind {
  const found = kinds.get(kind);
  if (!found) throw new Error(`no provider is registered for endpoint kind "${kind}" (src/llm/providers/index.ts lists them)`);
  return found;
}
