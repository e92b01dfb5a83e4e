import { createHash } from 'node:crypto';
import { idMaker, nowSeconds, type FileStore, type StoredFile } from './batch-files.js';
import { parseBatchInput, type BatchLine, type InputProblem } from './batch-input.js';
import type { BatchBehaviour } from './batch-profile.js';
import { BatchRules, type LinePlan } from './batch-rules.js';
import { answerSettled } from './chat-reply.js';
import type { SimEngine } from './engine.js';
import { errorBody, HttpError } from '../util/openai-http.js';

/**
 * Batches from creation to their output files: validating -> in_progress -> finalizing ->
 * completed (or failed, expired, cancelling -> cancelled), as OpenAI's Batch API moves them.
 * Lines are answered by answerSettled, the online path, after the profile's completion delay.
 */

export type BatchStatus = 'validating' | 'failed' | 'in_progress' | 'finalizing' | 'completed' | 'expired' | 'cancelling' | 'cancelled';
type Stamp = 'in_progress_at' | 'finalizing_at' | 'completed_at' | 'failed_at' | 'expired_at' | 'cancelling_at' | 'cancelled_at';
const STAMPS: readonly Stamp[] = ['in_progress_at', 'finalizing_at', 'completed_at', 'failed_at', 'expired_at', 'cancelling_at', 'cancelled_at'];
const FINAL: readonly BatchStatus[] = ['failed', 'completed', 'expired', 'cancelled'];
const WINDOW_SECONDS = 24 * 3600;
/** Lines answered between two turns of the event loop: polls stay answered during a 50,000-line batch. */
const LINES_PER_TURN = 200;

/** One accepted batch as tests see it: what it held and what became of each custom_id. */
export interface AcceptedBatchStats {
  id: string;
  /** 1-based, in the order the simulator accepted batches */
  seq: number;
  status: BatchStatus;
  requests: number;
  custom_ids: string[];
  /** error-file lines with an HTTP status (configured failures, bad bodies, unknown tasks) */
  failed: string[];
  /** error-file lines `batch_expired` */
  expired: string[];
  /** error-file lines `batch_cancelled` */
  cancelled: string[];
}

export interface BatchJobStats {
  /** batches that passed validation, in order of acceptance */
  accepted: AcceptedBatchStats[];
  /** batches that never got past validation: failed (bad input) or cancelled while validating */
  rejected: { id: string; status: BatchStatus }[];
  /** lines the engine answered in batches (a chat completion each, successful or not) */
  batch_requests: number;
  /** task name -> lines the engine answered with a completion */
  tasks: Record<string, number>;
}

export interface CreateParams {
  input_file_id: string;
  endpoint: string;
  completion_window: string;
  metadata?: Record<string, string> | null | undefined;
}

interface Job {
  id: string;
  input: StoredFile;
  params: CreateParams;
  created_at: number;
  status: BatchStatus;
  stamps: Partial<Record<Stamp, number>>;
  errors: InputProblem[] | null;
  counts: { total: number; completed: number; failed: number };
  usage: { input: number; output: number; reasoning: number };
  model: string | null;
  output_file_id: string | null;
  error_file_id: string | null;
  cancelRequested: boolean;
  timer: NodeJS.Timeout | undefined;
  /** set once accepted */
  accepted?: { lines: BatchLine[]; plan: LinePlan[]; expires: boolean; stats: AcceptedBatchStats; out: string[]; err: string[] };
}

/** Ids of an output line and of its request, stable for a (batch, custom_id). */
function lineIds(batchId: string, customId: string): { id: string; request_id: string } {
  const h = createHash('sha256').update(`${batchId}\0${customId}`).digest('hex');
  return { id: `batch_req_${h.slice(0, 24)}`, request_id: `req_${h.slice(24, 48)}` };
}

export class BatchJobs {
  private readonly jobs = new Map<string, Job>();
  private readonly order: Job[] = [];
  private readonly rules: BatchRules;
  private readonly nextId: () => string;
  private readonly s: BatchJobStats = { accepted: [], rejected: [], batch_requests: 0, tasks: {} };
  private closed = false;

  constructor(
    private readonly engine: SimEngine,
    private readonly files: FileStore,
    private readonly behaviour: BatchBehaviour,
    tag: string,
  ) {
    this.rules = new BatchRules(behaviour);
    this.nextId = idMaker('batch_', tag);
  }

  /** POST /v1/batches; the input file must exist and have been uploaded for purpose `batch`. */
  create(params: CreateParams): Record<string, unknown> {
    const input = this.files.get(params.input_file_id);
    if (!input) throw new HttpError(404, 'file_not_found', `No such File object: ${params.input_file_id}`);
    if (input.purpose !== 'batch') throw new HttpError(400, 'invalid_request', `file ${input.id} has purpose "${input.purpose}"; a batch's input file must be uploaded with purpose "batch"`);
    const job: Job = {
      id: this.nextId(),
      input,
      params,
      created_at: nowSeconds(),
      status: 'validating',
      stamps: {},
      errors: null,
      counts: { total: 0, completed: 0, failed: 0 },
      usage: { input: 0, output: 0, reasoning: 0 },
      model: null,
      output_file_id: null,
      error_file_id: null,
      cancelRequested: false,
      timer: undefined,
    };
    this.jobs.set(job.id, job);
    this.order.push(job);
    // Answered as `validating` first, as OpenAI does; validation runs on the next turn.
    job.timer = setTimeout(() => this.validate(job), 0);
    return batchObject(job);
  }

  get(id: string): Record<string, unknown> {
    return batchObject(this.job(id));
  }

  /** Newest first; `after` is the id of the last batch of the previous page. */
  list(limit: number, after: string | undefined): Record<string, unknown> {
    const newest = [...this.order].reverse();
    let start = 0;
    if (after !== undefined) {
      const i = newest.findIndex((j) => j.id === after);
      if (i < 0) throw new HttpError(400, 'invalid_request', `after: no batch ${after}`);
      start = i + 1;
    }
    const page = newest.slice(start, start + limit).map(batchObject);
    return { object: 'list', data: page, first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null, has_more: start + limit < newest.length };
  }

  /** Cancelling a batch that is cancelling or cancelled again is harmless; an ended one is a 409. */
  cancel(id: string): Record<string, unknown> {
    const job = this.job(id);
    if (job.status === 'cancelling' || job.status === 'cancelled') return batchObject(job);
    if (FINAL.includes(job.status)) throw new HttpError(409, 'batch_not_cancellable', `batch ${id} is ${job.status} and cannot be cancelled`);
    job.cancelRequested = true;
    this.setStatus(job, 'cancelling');
    if (job.accepted && job.timer) {
      // Waiting out the completion delay: end now, every line unexecuted.
      clearTimeout(job.timer);
      job.timer = setTimeout(() => void this.run(job), 0);
    }
    return batchObject(job);
  }

  stats(): BatchJobStats {
    return structuredClone(this.s);
  }

  /** Stops every pending batch where it is; their state stays readable. */
  close(): void {
    this.closed = true;
    for (const j of this.order) if (j.timer) clearTimeout(j.timer);
  }

  private job(id: string): Job {
    const job = this.jobs.get(id);
    if (!job) throw new HttpError(404, 'batch_not_found', `No batch found with id '${id}'.`);
    return job;
  }

  private setStatus(job: Job, status: BatchStatus): void {
    job.status = status;
    const stamp = `${status}_at` as Stamp;
    if (STAMPS.includes(stamp)) job.stamps[stamp] = nowSeconds();
    if (job.accepted) job.accepted.stats.status = status;
  }

  private validate(job: Job): void {
    job.timer = undefined;
    if (this.closed) return;
    if (job.cancelRequested) {
      this.setStatus(job, 'cancelled');
      this.s.rejected.push({ id: job.id, status: 'cancelled' });
      return;
    }
    const { lines, problems } = parseBatchInput(job.input.bytes, this.behaviour);
    for (const l of lines) {
      const model = l.body.model;
      if (typeof model === 'string' && this.engine.modelProfile(model)) continue;
      problems.push({ code: 'model_not_found', message: `line ${l.line}: the model ${JSON.stringify(model)} does not exist in the simulator profile`, line: l.line, param: 'body.model' });
      if (problems.length >= 20) break;
    }
    if (problems.length > 0) {
      job.errors = problems;
      this.setStatus(job, 'failed');
      this.s.rejected.push({ id: job.id, status: 'failed' });
      return;
    }
    this.accept(job, lines);
  }

  private accept(job: Job, lines: BatchLine[]): void {
    const ids = lines.map((l) => l.custom_id);
    const plan = this.rules.plan(ids);
    const stats: AcceptedBatchStats = { id: job.id, seq: plan.seq, status: 'in_progress', requests: lines.length, custom_ids: ids, failed: [], expired: [], cancelled: [] };
    this.s.accepted.push(stats);
    job.accepted = { lines, plan: plan.lines, expires: plan.expires, stats, out: [], err: [] };
    const models = new Set(lines.map((l) => l.body.model as string));
    job.model = models.size === 1 ? [...models][0]! : null;
    job.counts.total = lines.length;
    this.setStatus(job, 'in_progress');
    job.timer = setTimeout(() => void this.run(job), this.behaviour.completion_delay_ms);
  }

  private async run(job: Job): Promise<void> {
    job.timer = undefined;
    const a = job.accepted!;
    for (let i = 0; i < a.lines.length; i++) {
      if (i > 0 && i % LINES_PER_TURN === 0) await new Promise<void>((r) => setImmediate(r));
      if (this.closed) return;
      this.settleLine(job, a.lines[i]!, job.cancelRequested ? 'cancel' : a.plan[i]!);
    }
    this.finalize(job);
  }

  private settleLine(job: Job, line: BatchLine, plan: LinePlan | 'cancel'): void {
    const a = job.accepted!;
    const ids = lineIds(job.id, line.custom_id);
    if (plan === 'expire' || plan === 'cancel') {
      const [code, message, list] =
        plan === 'expire'
          ? ['batch_expired', 'This request could not be executed before the completion window expired.', a.stats.expired]
          : ['batch_cancelled', 'This request was not executed: the batch was cancelled.', a.stats.cancelled];
      a.err.push(JSON.stringify({ id: ids.id, custom_id: line.custom_id, response: null, error: { code, message } }));
      list.push(line.custom_id);
      job.counts.failed++;
      return;
    }
    const answer = plan === 'fail' ? ({ kind: 'error', status: 500, code: 'server_error', message: 'simulated failure of this request (profile batch.fail_custom_ids)' } as const) : answerSettled(this.engine, line.body);
    if (plan === 'answer') this.s.batch_requests++;
    if (answer.kind === 'ok') {
      a.out.push(JSON.stringify({ id: ids.id, custom_id: line.custom_id, response: { status_code: 200, request_id: ids.request_id, body: answer.body }, error: null }));
      job.counts.completed++;
      const r = answer.result;
      job.usage.input += r.tokens_in;
      job.usage.output += r.tokens_out;
      job.usage.reasoning += r.reasoning !== undefined ? Math.ceil(r.reasoning.length / 4) : 0;
      this.s.tasks[r.task] = (this.s.tasks[r.task] ?? 0) + 1;
      return;
    }
    // OpenAI reports a request that got an HTTP error with its response and `error: null`.
    const response = { status_code: answer.status, request_id: ids.request_id, body: errorBody(answer.status, answer.code, answer.message) };
    a.err.push(JSON.stringify({ id: ids.id, custom_id: line.custom_id, response, error: null }));
    a.stats.failed.push(line.custom_id);
    job.counts.failed++;
  }

  private finalize(job: Job): void {
    const a = job.accepted!;
    this.setStatus(job, 'finalizing');
    const write = (lines: string[], suffix: string): string | null => (lines.length ? this.files.add(Buffer.from(`${lines.join('\n')}\n`), `${job.id}_${suffix}.jsonl`, 'batch_output').id : null);
    job.output_file_id = write(a.out, 'output');
    job.error_file_id = write(a.err, 'error');
    a.out.length = 0;
    a.err.length = 0;
    this.setStatus(job, job.cancelRequested ? 'cancelled' : a.expires ? 'expired' : 'completed');
  }
}

/** OpenAI's Batch object; timestamps not reached yet are null. */
function batchObject(j: Job): Record<string, unknown> {
  const stamps = Object.fromEntries(STAMPS.map((s) => [s, j.stamps[s] ?? null]));
  return {
    id: j.id,
    object: 'batch',
    endpoint: j.params.endpoint,
    model: j.model,
    errors: j.errors ? { object: 'list', data: j.errors } : null,
    input_file_id: j.input.id,
    completion_window: j.params.completion_window,
    status: j.status,
    output_file_id: j.output_file_id,
    error_file_id: j.error_file_id,
    created_at: j.created_at,
    expires_at: j.created_at + WINDOW_SECONDS,
    ...stamps,
    request_counts: { ...j.counts },
    usage: {
      input_tokens: j.usage.input,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: j.usage.output,
      output_tokens_details: { reasoning_tokens: j.usage.reasoning },
      total_tokens: j.usage.input + j.usage.output,
    },
    metadata: j.params.metadata ?? null,
  };
}
