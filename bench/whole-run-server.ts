/**
 * Fake OpenAI-compatible endpoint for the whole-run benchmark, run as a forked child so its CPU
 * is not counted against the client under test. Every chat completion is answered exactly
 * LATENCY_MS after it arrived, with a reply that validates for its kind (a Phase 1 juror's
 * findings or a consolidation), so the client never re-asks.
 *
 * Parent -> child (IPC): { type: 'reset', capture: path | null } starts a new measured run and
 * optionally appends every request body as one JSONL line to `capture`; { type: 'stats' } asks
 * for the arrival times of that run. Child -> parent: { type: 'ready', url }, { type: 'reset' },
 * { type: 'stats', ... }.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const LATENCY_MS = Number(process.env.FAKE_LATENCY_MS ?? 500);

interface RunState {
  arrivals: number[];
  inFlight: number;
  maxInFlight: number;
  kinds: Record<string, number>;
  /** TCP connections accepted: a client that reuses its pool opens about as many as it keeps in flight. */
  connections: number;
  capture: WriteStream | null;
}

const fresh = (capture: string | null): RunState => ({ arrivals: [], inFlight: 0, maxInFlight: 0, kinds: {}, connections: 0, capture: capture ? createWriteStream(capture) : null });
let run = fresh(null);

interface Body {
  model?: string;
  messages?: Array<{ role: string; content: string }>;
}

/** The content of the first `<<<BEGIN label tag>>> ... <<<END label tag>>>` frame (the product's prompt framing). */
function framed(prompt: string, label: string): string | null {
  const m = new RegExp(`<<<BEGIN ${label} ([0-9a-f]{12})>>>\\n([\\s\\S]*?)\\n<<<END ${label} \\1>>>`).exec(prompt);
  return m ? m[2]! : null;
}

/** Step texts of the framed trace, in order ("[STEP-n] text" separated by blank lines). */
function stepsOf(prompt: string): string[] {
  const trace = framed(prompt, 'REASONING TRACE') ?? '';
  const parts = trace.split(/(?:^|\n\n)\[STEP-\d+\] /);
  return parts.slice(1);
}

/** Cheap deterministic hash so the same prompt always gets the same findings. */
function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i += 7) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

function quote(step: string | undefined): string {
  return (step ?? '').replace(/\s+/g, ' ').trim().slice(0, 90);
}

/** A Phase 1 juror's reply: two step-grounded findings on steps that exist. */
function jurorReply(prompt: string, model: string): unknown {
  const steps = stepsOf(prompt);
  const n = Math.max(1, steps.length);
  const a = (hash(prompt + model) % n) + 1;
  const b = n;
  return {
    negatives: [
      {
        statement_refs: [`STEP-${a}`],
        what_went_wrong: `[STEP-${a}] states '${quote(steps[a - 1])}', but this does not follow from the quantities given in the problem; the computation in this step has to be redone with the stated values before the next step can use it.`,
        impact: 'major',
        evidence: `[STEP-${a}] '${quote(steps[a - 1])}'`,
        correct_value: 'Recompute the step from the values stated in the problem.',
      },
      {
        statement_refs: [`STEP-${b}`],
        what_went_wrong: `[STEP-${b}] concludes '${quote(steps[b - 1])}' without checking the result against the constraint stated in the problem, so an inconsistent value is carried into the final response.`,
        impact: 'minor',
        evidence: `[STEP-${b}] '${quote(steps[b - 1])}'`,
      },
    ],
  };
}

interface PanelDefect {
  statement_refs?: string[];
  what_went_wrong?: string;
  impact?: string;
  evidence?: string;
}

/** A consolidation reply: the panel's findings merged by first cited step, with voters and vote counts. */
function consolidationReply(prompt: string): unknown {
  let panel: Record<string, { negatives?: PanelDefect[] }> = {};
  try {
    panel = JSON.parse(framed(prompt, 'PANEL FINDINGS') ?? '{}');
  } catch {
    panel = {};
  }
  const byStep = new Map<string, { d: PanelDefect; voters: string[] }>();
  for (const [juror, j] of Object.entries(panel)) {
    for (const d of j.negatives ?? []) {
      const key = d.statement_refs?.[0] ?? 'STEP-1';
      const entry = byStep.get(key);
      if (entry) {
        if (!entry.voters.includes(juror)) entry.voters.push(juror);
      } else byStep.set(key, { d, voters: [juror] });
    }
  }
  const negatives = [...byStep.values()].slice(0, 3).map(({ d, voters }) => ({
    statement_refs: d.statement_refs ?? ['STEP-1'],
    what_went_wrong: d.what_went_wrong ?? 'The cited step does not follow from the problem.',
    impact: d.impact ?? 'minor',
    evidence: d.evidence ?? '',
    vote_count: voters.length,
    voters,
  }));
  return { negatives };
}

function replyFor(body: Body): { kind: string; content: string; promptChars: number } {
  const prompt = (body.messages ?? []).map((m) => m.content).join('\n');
  const kind = prompt.includes('<<<BEGIN PANEL FINDINGS ') ? 'consolidation' : prompt.includes('<<<BEGIN REASONING TRACE ') ? 'juror' : 'other';
  const value = kind === 'consolidation' ? consolidationReply(prompt) : kind === 'juror' ? jurorReply(prompt, body.model ?? '') : { negatives: [] };
  return { kind, content: JSON.stringify(value), promptChars: prompt.length };
}

let seq = 0;
function completion(body: Body, content: string, promptChars: number): string {
  const prompt_tokens = Math.ceil(promptChars / 4);
  const completion_tokens = Math.ceil(content.length / 4);
  return JSON.stringify({
    id: `chatcmpl-fake-${++seq}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: body.model ?? 'fake',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop', logprobs: null }],
    usage: { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens },
  });
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  const arrived = Date.now();
  const state = run;
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
      return;
    }
    const raw = Buffer.concat(chunks).toString('utf8');
    state.arrivals.push(arrived);
    state.inFlight += 1;
    state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
    const body = JSON.parse(raw) as Body;
    // One body per line; a client that pretty-printed its JSON is re-serialised compactly.
    state.capture?.write((raw.includes('\n') ? JSON.stringify(body) : raw) + '\n');
    const { kind, content, promptChars } = replyFor(body);
    state.kinds[kind] = (state.kinds[kind] ?? 0) + 1;
    const payload = completion(body, content, promptChars);
    setTimeout(() => {
      state.inFlight -= 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end(payload);
    }, Math.max(0, arrived + LATENCY_MS - Date.now()));
  });
}

const server = createServer({ keepAliveTimeout: 60_000 }, handle);
server.on('connection', () => (run.connections += 1));
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.send!({ type: 'ready', url: `http://127.0.0.1:${port}/v1` });
});

process.on('message', (m: { type: string; capture?: string | null }) => {
  if (m.type === 'reset') {
    const old = run.capture;
    run = fresh(m.capture ?? null);
    if (old) old.end(() => process.send!({ type: 'reset' }));
    else process.send!({ type: 'reset' });
  } else if (m.type === 'stats') {
    const finish = () => process.send!({ type: 'stats', arrivals: run.arrivals, maxInFlight: run.maxInFlight, kinds: run.kinds, connections: run.connections });
    if (run.capture) {
      const c = run.capture;
      run.capture = null;
      c.end(finish);
    } else finish();
  } else if (m.type === 'close') server.close(() => process.exit(0));
});
