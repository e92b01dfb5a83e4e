/**
 * `kind: simulator`: the juror simulator. Only the CLI may load src/sim, so it starts one
 * loopback server per such endpoint (src/cli/simulators.ts) and hands the runtime the endpoint
 * with that server's base_url; from there it is reached like any OpenAI-compatible server.
 */
import { createOpenAIProvider } from '../openai-provider.js';
import { registerProviderKind } from './registry.js';

registerProviderKind({ kind: 'simulator', create: (name, endpoint) => createOpenAIProvider(name, endpoint) });
