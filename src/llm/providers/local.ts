/**
 * `kind: local`: a GGUF model run in this process on llama.cpp. The engine's code (bindings,
 * grammar, queue) loads only when a seat of it is first called.
 */
import type { EndpointConfig } from '../../../schemas/config.js';
import { resolveModelPath } from '../../models/cache.js';
import type { Provider } from '../types.js';
import { registerProviderKind } from './registry.js';

function lazyLocalProvider(name: string, endpoint: EndpointConfig): Provider {
  if (!endpoint.model_path) throw new Error(`endpoint "${name}" (kind: local) has no model_path`);
  let provider: Promise<Provider> | undefined;
  const get = () => (provider ??= import('../local-provider.js').then((m) => m.createLocalProvider(name, endpoint)));
  return {
    name,
    complete: async (req, signal) => (await get()).complete(req, signal),
    async close() {
      if (provider) await (await provider).close?.();
    },
  };
}

registerProviderKind({
  kind: 'local',
  create: lazyLocalProvider,
  // A missing model fails here, with how to fetch it, rather than in every juror's call.
  prepare: (_name, endpoint) => ({ ...endpoint, model_path: resolveModelPath(endpoint.model_path!) }),
});
