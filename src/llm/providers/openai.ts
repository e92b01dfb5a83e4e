/** `kind: openai` (the default): any OpenAI-compatible HTTP server, through the openai client. */
import { createOpenAIProvider } from '../openai-provider.js';
import { registerProviderKind } from './registry.js';

registerProviderKind({ kind: 'openai', create: (name, endpoint) => createOpenAIProvider(name, endpoint), sendsKey: true });
