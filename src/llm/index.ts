/** Public surface of the model layer. */
export * from './types.js';
export { createGateway, type Gateway, type GatewayOptions } from './gateway.js';
export { Ledger, costOf, type LedgerSummary, type PriceTable, type Totals } from './ledger.js';
export { createRedactor, redactDeep, redactSecrets, secretValues, REDACTED, type Redactor } from './redact.js';
export { cacheKey, canonicalJson, createResponseCache, hashMessages, sha256, type CacheEntry, type CacheKeyInput, type ResponseCache } from './cache.js';
export { createAuditLog, type AuditEntry, type AuditLog, type AuditOutcome } from './audit.js';
export { extractJson, parseStructured, formatZodError } from './json.js';
export { createLimiter, rateWindow, type Limiter } from './limits.js';
export { backoffDelay, realSleep, withRetry, type RetryPolicy, type SleepFn } from './retry.js';
export { createOpenAIProvider, parseRetryAfter, isRetryableStatus } from './openai-provider.js';
