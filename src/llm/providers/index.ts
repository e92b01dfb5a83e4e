/** The registered provider kinds: one line per kind, each importing the module that registers it (registry.ts). */
import './openai.js';
import './simulator.js';
import './local.js';

export { providerKind, type EndpointKind, type ProviderKind } from './registry.js';
