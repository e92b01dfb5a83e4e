/**
 * The library's public surface (package.json "exports" "."): embed the stage in a Node program.
 *
 * - `createJury(config)`: judge one record at a time (`judge`, `close`).
 * - `juryStream(options)`: a Duplex in object mode, records in, results out, with bounded
 *   concurrency and backpressure both ways; bad records come out as dead letters.
 * - `runStage({ source, output, config })`: the whole stage with its shards, manifests and
 *   resume, over an input URL or the caller's own records with positions.
 * - `startJurySimulator()`: the juror simulator, for the caller's own tests.
 *
 * Everything not exported here is private and may change in any release; this surface follows
 * semantic versioning (docs/embedding.md), checked by test/api/api-report.test.ts.
 */
export { loadConfig } from './config.js';
export { createJury } from './jury.js';
export { juryStream } from './stream.js';
export { runStage } from './stage.js';
export { startJurySimulator, type JurySimulator, type SimulatorOptions } from './simulator.js';
export { RecordError } from './record-error.js';
export { ConfigError } from '../config/load.js';
export { UsageError } from './usage.js';
export { EndpointFaultError, EndpointOutageError } from '../llm/outage.js';
export { ReasoningJuryError, errorKindOf, type ErrorKind } from '../util/errors.js';
export type * from './types.js';
