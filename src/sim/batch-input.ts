import { z } from 'zod';

/**
 * A Batch API input file: JSONL, one request per line, as OpenAI documents it
 * (`{custom_id, method: "POST", url: "/v1/chat/completions", body}`). Checked whole on upload,
 * so a client learns of a bad line at once rather than from a failed batch minutes later.
 */

export const CHAT_ENDPOINT = '/v1/chat/completions';

/** Enough to fix a file without drowning the error body in a 50,000-line report. */
const MAX_PROBLEMS = 20;

const InputLine = z
  .object({
    custom_id: z.string().min(1),
    method: z.string(),
    url: z.string(),
    body: z.record(z.string(), z.unknown()),
  })
  .loose();

export interface BatchLine {
  custom_id: string;
  body: Record<string, unknown>;
  /** 1-based line number in the file */
  line: number;
}

/** One reason a file cannot be a batch's input; OpenAI's BatchError shape. */
export interface InputProblem {
  code: string;
  message: string;
  line: number | null;
  param: string | null;
}

export interface InputLimits {
  max_requests: number;
  max_bytes: number;
}

function problem(code: string, message: string, line: number | null = null, param: string | null = null): InputProblem {
  return { code, message: line === null ? message : `line ${line}: ${message}`, line, param };
}

/** One line as a request, or why it is not one. */
function parseLine(text: string, line: number): BatchLine | InputProblem {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    return problem('invalid_json_line', `not JSON (${(e as Error).message})`, line);
  }
  const r = InputLine.safeParse(raw);
  if (!r.success) {
    const first = r.error.issues[0]!;
    return problem('invalid_request', `${first.path.join('.') || 'line'}: ${first.message}`, line, first.path.join('.') || null);
  }
  if (r.data.method !== 'POST') return problem('invalid_method', `method must be POST (got "${r.data.method}")`, line, 'method');
  if (r.data.url !== CHAT_ENDPOINT) return problem('invalid_url', `url must be ${CHAT_ENDPOINT} (got "${r.data.url}")`, line, 'url');
  return { custom_id: r.data.custom_id, body: r.data.body, line };
}

/** The file's requests, or every problem found (up to MAX_PROBLEMS). Blank lines are skipped. */
export function parseBatchInput(bytes: Buffer, limits: InputLimits): { lines: BatchLine[]; problems: InputProblem[] } {
  if (bytes.length > limits.max_bytes) {
    return { lines: [], problems: [problem('file_too_large', `the file has ${bytes.length} bytes, above the limit of ${limits.max_bytes}`)] };
  }
  const lines: BatchLine[] = [];
  const problems: InputProblem[] = [];
  const seen = new Map<string, number>();
  const texts = bytes.toString('utf8').split('\n');
  for (let i = 0; i < texts.length && problems.length < MAX_PROBLEMS; i++) {
    const text = texts[i]!.trim();
    if (text === '') continue;
    const parsed = parseLine(text, i + 1);
    if ('code' in parsed) {
      problems.push(parsed);
      continue;
    }
    const earlier = seen.get(parsed.custom_id);
    if (earlier !== undefined) problems.push(problem('duplicate_custom_id', `custom_id "${parsed.custom_id}" is also on line ${earlier}; custom_ids must be unique within a batch`, i + 1, 'custom_id'));
    else seen.set(parsed.custom_id, i + 1);
    lines.push(parsed);
  }
  if (problems.length === 0 && lines.length === 0) problems.push(problem('empty_file', 'the file holds no requests'));
  if (lines.length > limits.max_requests) problems.push(problem('too_many_requests', `the file holds ${lines.length} requests, above the limit of ${limits.max_requests}`));
  return { lines: problems.length ? [] : lines, problems };
}
