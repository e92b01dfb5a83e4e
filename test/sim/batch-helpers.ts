import OpenAI, { toFile } from 'openai';
import type { Batch } from 'openai/resources/batches';
import type { ChatRequest } from '../../src/llm/types.js';
import type { SimBatchStats } from '../../src/sim/server.js';

/** What batch tests share: input lines, upload, polling on progress, reading output files. */

export interface InputLine {
  custom_id: string;
  method: 'POST';
  url: string;
  body: Record<string, unknown>;
}

/** The wire body of a chat request, as an online client would send it. */
export function wireBody(req: ChatRequest): Record<string, unknown> {
  return { model: req.model, messages: req.messages, ...(req.seed !== undefined ? { seed: req.seed } : {}), ...(req.temperature !== undefined ? { temperature: req.temperature } : {}) };
}

export function inputLine(custom_id: string, req: ChatRequest): InputLine {
  return { custom_id, method: 'POST', url: '/v1/chat/completions', body: wireBody(req) };
}

export function jsonl(rows: readonly unknown[]): string {
  return `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`;
}

export function client(url: string): OpenAI {
  return new OpenAI({ baseURL: url, apiKey: 'sk-test-not-a-secret', maxRetries: 0, timeout: 20_000 });
}

export async function upload(c: OpenAI, text: string, name = 'in.jsonl'): Promise<string> {
  return (await c.files.create({ file: await toFile(Buffer.from(text), name), purpose: 'batch' })).id;
}

export async function submit(c: OpenAI, lines: readonly InputLine[]): Promise<Batch> {
  const input_file_id = await upload(c, jsonl(lines));
  return c.batches.create({ input_file_id, endpoint: '/v1/chat/completions', completion_window: '24h' });
}

/**
 * Polls until `done` holds, returning every status seen on the way. The deadline only stops a
 * broken simulator from hanging the run; passing never depends on it.
 */
export async function pollUntil(c: OpenAI, id: string, done: (b: Batch) => boolean, ms = 30_000): Promise<{ batch: Batch; seen: string[] }> {
  const seen: string[] = [];
  const end = Date.now() + ms;
  for (;;) {
    const batch = await c.batches.retrieve(id);
    if (seen.at(-1) !== batch.status) seen.push(batch.status);
    if (done(batch)) return { batch, seen };
    if (Date.now() > end) throw new Error(`batch ${id} still ${batch.status}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const ENDED = new Set(['completed', 'failed', 'expired', 'cancelled']);
export const ended = (b: Batch): boolean => ENDED.has(b.status);

export interface OutputLine {
  id: string;
  custom_id: string;
  response: { status_code: number; request_id: string; body: Record<string, unknown> | null } | null;
  error: { code: string; message: string } | null;
}

export async function readLines(c: OpenAI, fileId: string | null | undefined): Promise<OutputLine[]> {
  if (!fileId) return [];
  const text = await (await c.files.content(fileId)).text();
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as OutputLine);
}

/**
 * The billing rule of issue 39: a custom_id is in two accepted batches only when the earlier
 * one failed or expired it. Returns the custom_ids that break it.
 */
export function billedTwice(stats: SimBatchStats): string[] {
  const open = new Set<string>();
  const bad: string[] = [];
  for (const b of stats.accepted) {
    for (const id of b.custom_ids) if (open.has(id)) bad.push(id);
    const released = new Set([...b.failed, ...b.expired]);
    for (const id of b.custom_ids) if (!released.has(id)) open.add(id);
  }
  return bad;
}
