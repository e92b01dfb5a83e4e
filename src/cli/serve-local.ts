import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { z } from 'zod';
import { JudgementOutput } from '../../schemas/defect.js';
import { defaultThreads } from '../llm/local/engine.js';
import { acquireEngine } from '../llm/local/registry.js';
import { startLocalServer } from '../llm/local/server.js';
import { resolveModelPath } from '../models/cache.js';
import { UsageError } from './io.js';

interface ServeLocalOptions {
  model: string;
  port: string;
  host: string;
  threads?: string;
  contextSize?: string;
  modelId?: string;
  jsonSchema?: string;
  apiKeyEnv?: string;
}

export function registerServeLocal(program: Command): void {
  program
    .command('serve-local')
    .description('serve a local GGUF model as an OpenAI-compatible /v1/chat/completions (llama.cpp, in-process)')
    .requiredOption('-m, --model <model>', 'a .gguf file, or a fetched model name (see `models list`)')
    .option('-p, --port <port>', 'port to listen on (0 = any free port)', '8090')
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--threads <n>', 'inference threads (default: 1 under CI, else up to 4)')
    .option('--context-size <n>', "context window in tokens (default: the model's, capped at 16384)")
    .option('--model-id <id>', 'model id listed by /v1/models (default: the file name)')
    .option('--json-schema <schema>', 'constrain replies of requests without a response_format: "judgement" (the jury\'s reply schema) or a JSON Schema file')
    .option('--api-key-env <var>', 'require this environment variable\'s value as the bearer token')
    .addHelpText(
      'after',
      `
Requests may carry response_format {type: "json_schema", json_schema: {schema}} or {type: "json_object"};
the reply is then constrained by a grammar. Point an endpoint at it with base_url: http://127.0.0.1:<port>/v1.
Stops on SIGINT/SIGTERM.`,
    )
    .action(async (opts: ServeLocalOptions) => {
      const port = intOption(opts.port, '--port', 0, 65535);
      const threads = opts.threads !== undefined ? intOption(opts.threads, '--threads', 1, 256) : defaultThreads();
      const contextSize = opts.contextSize !== undefined ? intOption(opts.contextSize, '--context-size', 64, 1 << 20) : undefined;
      const modelPath = resolveModelPath(opts.model);
      const defaultJsonSchema = opts.jsonSchema ? loadSchema(opts.jsonSchema) : undefined;
      let apiKey: string | undefined;
      if (opts.apiKeyEnv) {
        apiKey = process.env[opts.apiKeyEnv];
        if (!apiKey) throw new UsageError(`--api-key-env ${opts.apiKeyEnv}: that environment variable is empty`);
      }
      const lease = await acquireEngine({ modelPath, threads, ...(contextSize !== undefined ? { contextSize } : {}) });
      try {
        const server = await startLocalServer({
          engine: lease.engine,
          host: opts.host,
          port,
          modelId: opts.modelId ?? basename(modelPath).replace(/\.gguf$/i, ''),
          ...(defaultJsonSchema ? { defaultJsonSchema } : {}),
          ...(apiKey !== undefined ? { apiKey } : {}),
        });
        process.stdout.write(`local model server listening on ${server.url} (${lease.engine.modelName}, ${threads} thread(s), context ${lease.engine.contextSize})\n`);
        await new Promise<void>((resolve) => {
          process.once('SIGINT', () => resolve());
          process.once('SIGTERM', () => resolve());
        });
        await server.close();
      } finally {
        await lease.release();
      }
    });
}

function intOption(value: string, name: string, min: number, max: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`${name} must be an integer in ${min}..${max} (got "${value}")`);
  return n;
}

function loadSchema(spec: string): Record<string, unknown> {
  if (spec === 'judgement') return z.toJSONSchema(JudgementOutput, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(spec, 'utf8'));
  } catch (err) {
    throw new UsageError(`--json-schema ${spec}: ${(err as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new UsageError(`--json-schema ${spec}: not a JSON Schema object`);
  return parsed as Record<string, unknown>;
}
