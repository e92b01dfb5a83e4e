/** Public surface of the model layer. */
export * from './types.js';
export { createGateway, type Gateway, type GatewayOptions } from './gateway.js';
export { FINISH_REASONS, isFinishReason, toFinishReason } from './finish-reason.js';
export { generateObject, generateText, jsonSchemaOf, parseReply, type CallModel, type ObjectRequest, type Parsed } from './generate.js';
export { callCore, linkSignals, type CoreDeps } from './call.js';
export {
  providerAttempt,
  stackAttempt,
  stackCalls,
  toCompletion,
  type Attempt,
  type AttemptInfo,
  type AttemptLayer,
  type CallHandler,
  type CallInfo,
  type CallLayer,
  type CallMeter,
  type Completion,
  type EndpointHandle,
  type ModelCall,
  type ReplyCheck,
  type TurnInfo,
  type TurnModel,
} from './model.js';
export { retryLayer, type RetryLayerOptions } from './layers/retry.js';
export { limitLayer } from './layers/limit.js';
export { redactLayer, asProviderError } from './layers/redact.js';
export { countUsage, newMeter, usageOf, type CostFn } from './layers/usage.js';
export { auditAttempts, auditCacheHits } from './layers/audit.js';
export { cacheLayer, cacheIdentity } from './layers/cache.js';
export { ledgerLayer } from './layers/ledger.js';
export { Ledger, costOf, type LedgerSummary, type PriceTable, type Totals } from './ledger.js';
export { createRedactor, redactDeep, redactSecrets, secretValues, REDACTED, type Redactor } from '../util/redact.js';
export { cacheKey, canonicalJson, createResponseCache, hashMessages, sha256, type CacheEntry, type CacheKeyInput, type ResponseCache } from './cache.js';
export { createAuditLog, type AuditEntry, type AuditLog, type AuditOutcome } from './audit.js';
export { extractJson, parseStructured, formatZodError } from './json.js';
export { createLimiter, rateWindow, type Limiter } from './limits.js';
export { backoffDelay, realSleep, withRetry, type RetryPolicy, type SleepFn } from './retry.js';
export { createOpenAIProvider, parseRetryAfter, isRetryableStatus } from './openai-provider.js';
export { RejectedFieldError, isRejectedField, rejectedField, settingFor } from './rejection.js';
export { AUTO_ORDER, dialectFields, type Dialect } from './dialect.js';
export { observeAttempts, observeCalls } from './layers/observe.js';
export { attemptErrorKind, type AttemptErrorKind, type AttemptEvent, type CallEvent, type GatewayObserver } from './observer.js';
