/**
 * The OpenAI Files + Batches API through the official `openai` client: upload the input JSONL
 * (purpose `batch`), create the batch, poll it, read its output and error files, cancel it. The
 * same API is served by Azure OpenAI, Together, Groq and the juror simulator.
 */
import OpenAI, { toFile } from 'openai';
import type { EndpointConfig } from '../../../../schemas/config.js';
import { clientFor, toProviderError } from '../../openai-provider.js';
import type { Redactor } from '../../../util/redact.js';
import { ProviderError } from '../../types.js';
import type { BatchPaths, BatchState } from './journal.js';
import { CHAT_PATH } from './lines.js';

/** What the server says of a batch. */
export interface BatchInfo {
  id: string;
  state: BatchState;
  input_file_id?: string;
  output_file_id?: string;
  error_file_id?: string;
  /** the server's reasons, when it failed the whole batch */
  errors?: string;
  /** dialect `command`: where its files are (recorded in the journal) */
  paths?: BatchPaths;
}

/** How batches reach a server (or a local command): openai-dialect.ts, command-dialect.ts. */
export interface BatchDialect {
  readonly name: string;
  upload(jsonl: string, signal: AbortSignal): Promise<string>;
  create(inputFileId: string, signal: AbortSignal): Promise<BatchInfo>;
  retrieve(batchId: string, signal: AbortSignal): Promise<BatchInfo>;
  /** the batch created from this input file, if the server has one (a re-run after a stop between upload and record) */
  findByInputFile(inputFileId: string, signal: AbortSignal): Promise<BatchInfo | undefined>;
  download(fileId: string, signal: AbortSignal): Promise<string>;
  cancel(batchId: string, signal: AbortSignal): Promise<BatchInfo>;
}

/** The server no longer knows the batch (404): its requests are submitted again. */
export class BatchGoneError extends ProviderError {}

export function openaiDialect(name: string, endpoint: EndpointConfig, redactor: Redactor, env: NodeJS.ProcessEnv = process.env): BatchDialect {
  if (!endpoint.base_url) throw new Error(`endpoint "${name}" has no base_url`);
  const apiKey = (endpoint.api_key_env ? env[endpoint.api_key_env] : undefined) || 'not-needed';
  const client = clientFor(endpoint, apiKey, globalThis.fetch);
  const window = (endpoint.batch?.completion_window ?? '24h') as '24h';
  const wrap = async <T>(what: string, run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (err) {
      if (err instanceof OpenAI.NotFoundError && what.startsWith('GET /batches/')) throw new BatchGoneError(redactor.text(`${what}: the server does not know this batch`), true, 404);
      const e = toProviderError(err, redactor);
      throw new ProviderError(`${what}: ${e.message}`, e.retryable, e.status, e.retryAfterMs, e.reach);
    }
  };
  return {
    name: 'openai',
    upload: (jsonl, signal) => wrap('POST /files', async () => (await client.files.create({ file: await toFile(Buffer.from(jsonl), 'batch-input.jsonl'), purpose: 'batch' }, { signal })).id),
    create: (inputFileId, signal) => wrap('POST /batches', async () => infoOf(await client.batches.create({ input_file_id: inputFileId, endpoint: CHAT_PATH, completion_window: window }, { signal }))),
    retrieve: (batchId, signal) => wrap(`GET /batches/${batchId}`, async () => infoOf(await client.batches.retrieve(batchId, { signal }))),
    findByInputFile: (inputFileId, signal) =>
      wrap('GET /batches', async () => {
        for await (const b of client.batches.list({ limit: 100 }, { signal })) if (b.input_file_id === inputFileId) return infoOf(b);
        return undefined;
      }),
    download: (fileId, signal) => wrap(`GET /files/${fileId}/content`, async () => (await client.files.content(fileId, { signal })).text()),
    cancel: (batchId, signal) => wrap(`POST /batches/${batchId}/cancel`, async () => infoOf(await client.batches.cancel(batchId, { signal }))),
  };
}

const STATES: ReadonlySet<string> = new Set(['validating', 'in_progress', 'finalizing', 'completed', 'failed', 'expired', 'cancelling', 'cancelled']);

function infoOf(b: OpenAI.Batches.Batch): BatchInfo {
  const errors = b.errors?.data?.map((e) => `${e.code ?? 'error'}: ${e.message ?? ''}`).join('; ');
  return {
    id: b.id,
    // A status this client does not know yet is waited on like one in progress.
    state: STATES.has(b.status) ? (b.status as BatchState) : 'in_progress',
    input_file_id: b.input_file_id,
    ...(b.output_file_id ? { output_file_id: b.output_file_id } : {}),
    ...(b.error_file_id ? { error_file_id: b.error_file_id } : {}),
    ...(errors ? { errors } : {}),
  };
}
