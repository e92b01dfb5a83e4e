/** Public surface of the juror simulator (see the module comments for behaviour). */
export { startSimulator, type RunningSimulator, type SimBatchStats, type SimulatorOptions } from './server.js';
export { toChatRequest, answerSettled, type SettledAnswer } from './chat-reply.js';
export { parseBatchInput, CHAT_ENDPOINT, type BatchLine, type InputProblem } from './batch-input.js';
export { BatchBehaviour, defaultBatchBehaviour, type BatchBehaviourInput } from './batch-profile.js';
export type { AcceptedBatchStats, BatchJobStats, BatchStatus } from './batch-jobs.js';
export { createSimProvider, type SimProvider, type SimProviderOptions } from './provider.js';
export { SimEngine, estimateTokens, requestKey, type EngineOptions, type EngineResult } from './engine.js';
export { loadProfileFile, parseProfile, modelProfile, listedModels, withoutFaults, withoutLatency, ProfileError, type SimProfile, type ModelProfile, type ModelEntryInput, type ProfileFileInput } from './profile.js';
export { defaultProfile, DEFAULT_PROFILE_INPUT, DEFAULT_JUROR_MODELS, DEFAULT_CONSOLIDATOR_MODEL } from './default-profile.js';
export { loadGoldFile, buildGoldIndex, goldKey, recordBlocks, goldErrorSteps, NO_GOLD, type GoldIndex, type GoldEntry, type GoldOptions } from './gold.js';
export { InputGoldIndex } from './input-gold.js';
export { isInventedQuote, inventedQuote } from './text.js';
export { DEFAULT_TASKS, phase1Task, consolidationTask, TaskInputError, type SimTask, type TaskInput, type TaskOutput } from './tasks.js';
export type { SimStatsSnapshot, Outcome } from './runtime.js';
