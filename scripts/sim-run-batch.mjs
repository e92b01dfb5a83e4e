#!/usr/bin/env node
/**
 * Plays `vllm run-batch` with the juror simulator, so the `command` batch dialect is tested
 * without a GPU: it reads an OpenAI batch input file and writes one output line per input line.
 *
 *   node scripts/sim-run-batch.mjs -i IN.jsonl -o OUT.jsonl [--model M] [--profile P.yaml] [--gold G.jsonl]
 *   node scripts/sim-run-batch.mjs -i IN.jsonl -o OUT.jsonl [--model M] --url http://127.0.0.1:8089/v1
 *
 *   -i, --input-file FILE    batch input JSONL: {custom_id, method: "POST", url: "/v1/chat/completions", body}
 *   -o, --output-file FILE   where the output JSONL goes (written whole at the end, via a temporary file)
 *   --model M                the served model, as vLLM's --model: a line naming another model gets a 404 line
 *   --profile FILE           simulator profile (YAML/JSON); the built-in one when absent (in-process only)
 *   --gold FILE              JSONL of labelled records the simulated jurors grade against (in-process only)
 *   --url URL                a running simulator's base URL (ending in /v1): the file goes through its Batch API
 *                            (upload, create, poll, download), so its `batch:` profile and batchStats() apply
 *                            and no online chat call is made; without --url the lines are answered in-process
 *
 * Each line is answered by the simulator's online path (answerSettled), so a body gets the bytes
 * an online call of it gets. Output lines, in input order, as vLLM writes them:
 *   {id, custom_id, response: {status_code: 200, request_id, body: <chat.completion>}, error: null}
 *   {id, custom_id, response: {status_code, request_id, body: null}, error: {object: "error", message, type, param, code}}
 * and, with --url, a line the batch expired or cancelled: {id, custom_id, response: null, error: {code, message}}.
 *
 * Exit status: 0 when the output file is written (failed lines included), 1 on bad flags or a bad
 * input file, 2 when the simulator behind --url cannot be reached or fails the batch.
 * Loads dist/src/sim: build first (npm run build; the test setup does).
 */
import { createHash } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const USAGE = 'usage: sim-run-batch.mjs -i IN.jsonl -o OUT.jsonl [--model M] [--profile P] [--gold G | --url URL]';

class Exit extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

function flags() {
  try {
    const { values } = parseArgs({
      options: {
        'input-file': { type: 'string', short: 'i' },
        'output-file': { type: 'string', short: 'o' },
        model: { type: 'string' },
        profile: { type: 'string' },
        gold: { type: 'string' },
        url: { type: 'string' },
      },
    });
    if (!values['input-file'] || !values['output-file']) throw new Error('-i and -o are required');
    if (values.url && (values.profile || values.gold)) throw new Error('--profile and --gold are the running simulator\'s business with --url');
    return values;
  } catch (e) {
    throw new Exit(1, `${e.message}\n${USAGE}`);
  }
}

/** Stable ids per (custom_id, line): reruns write identical files. */
function lineIds(customId, line) {
  const h = createHash('sha256').update(`${line}\0${customId}`).digest('hex');
  return { id: `vllm-sim-${h.slice(0, 24)}`, request_id: `vllm-batch-sim-${h.slice(24, 48)}` };
}

function errorLine(line, status, code, message) {
  const { id, request_id } = lineIds(line.custom_id, line.line);
  const type = status >= 500 ? 'server_error' : 'invalid_request_error';
  return { id, custom_id: line.custom_id, response: { status_code: status, request_id, body: null }, error: { object: 'error', message, type, param: null, code } };
}

function okLine(line, body) {
  const { id, request_id } = lineIds(line.custom_id, line.line);
  return { id, custom_id: line.custom_id, response: { status_code: 200, request_id, body }, error: null };
}

async function answerInProcess(sim, lines, opts) {
  const profile = opts.profile ? sim.loadProfileFile(opts.profile) : sim.defaultProfile();
  const gold = opts.gold ? sim.loadGoldFile(opts.gold) : sim.NO_GOLD;
  const engine = new sim.SimEngine({ profile, gold });
  return lines.map((line) => {
    if (opts.model && line.body.model !== opts.model) return errorLine(line, 404, 'model_not_found', `The model \`${line.body.model}\` does not exist.`);
    const a = sim.answerSettled(engine, line.body);
    return a.kind === 'ok' ? okLine(line, a.body) : errorLine(line, a.status, a.code, a.message);
  });
}

async function call(url, init) {
  let res;
  try {
    res = await fetch(url, init);
  } catch (e) {
    throw new Exit(2, `simulator at ${url} unreachable: ${e.message}`);
  }
  if (!res.ok) throw new Exit(2, `${init?.method ?? 'GET'} ${url}: HTTP ${res.status} ${await res.text()}`);
  return res;
}

/** Upload, create, poll until the batch ends, then the output and error files' lines by custom_id. */
async function runRemote(base, text) {
  const form = new FormData();
  form.set('purpose', 'batch');
  form.set('file', new Blob([text]), 'input.jsonl');
  const file = await (await call(`${base}/files`, { method: 'POST', body: form })).json();
  const created = await (await call(`${base}/batches`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }) })).json();
  let batch = created;
  while (!['completed', 'failed', 'expired', 'cancelled'].includes(batch.status)) {
    await new Promise((r) => setTimeout(r, 20));
    batch = await (await call(`${base}/batches/${created.id}`)).json();
  }
  if (batch.status === 'failed') throw new Exit(2, `batch ${batch.id} failed: ${batch.errors?.data?.map((e) => e.message).join('; ')}`);
  const byId = new Map();
  for (const fileId of [batch.output_file_id, batch.error_file_id]) {
    if (!fileId) continue;
    const body = await (await call(`${base}/files/${fileId}/content`)).text();
    for (const l of body.split('\n')) if (l.trim()) byId.set(JSON.parse(l).custom_id, JSON.parse(l));
  }
  return byId;
}

async function answerRemote(lines, opts) {
  const base = opts.url.replace(/\/+$/, '');
  const served = lines.filter((l) => !opts.model || l.body.model === opts.model);
  const text = served.map((l) => JSON.stringify({ custom_id: l.custom_id, method: 'POST', url: '/v1/chat/completions', body: l.body })).join('\n');
  const byId = served.length ? await runRemote(base, `${text}\n`) : new Map();
  return lines.map((line) => {
    if (!served.includes(line)) return errorLine(line, 404, 'model_not_found', `The model \`${line.body.model}\` does not exist.`);
    const got = byId.get(line.custom_id);
    if (!got) return errorLine(line, 500, 'missing_output', 'the batch wrote no line for this request');
    // Expired or cancelled: vLLM never does that, so the simulator's own error is passed on.
    if (got.response === null) return { id: lineIds(line.custom_id, line.line).id, custom_id: line.custom_id, response: null, error: got.error };
    if (got.response.status_code === 200) return okLine(line, got.response.body);
    const err = got.response.body?.error ?? {};
    return errorLine(line, got.response.status_code, err.code ?? null, err.message ?? 'request failed');
  });
}

async function main() {
  const opts = flags();
  const sim = await import(new URL('../dist/src/sim/index.js', import.meta.url).href);
  let bytes;
  try {
    bytes = readFileSync(opts['input-file']);
  } catch (e) {
    throw new Exit(1, `cannot read ${opts['input-file']}: ${e.message}`);
  }
  const { lines, problems } = sim.parseBatchInput(bytes, { max_requests: Number.MAX_SAFE_INTEGER, max_bytes: Number.MAX_SAFE_INTEGER });
  if (problems.length) throw new Exit(1, `invalid batch input ${opts['input-file']}: ${problems.map((p) => p.message).join('; ')}`);
  const out = opts.url ? await answerRemote(lines, opts) : await answerInProcess(sim, lines, opts);
  const tmp = `${opts['output-file']}.tmp-${process.pid}`;
  writeFileSync(tmp, out.map((l) => `${JSON.stringify(l)}\n`).join(''));
  renameSync(tmp, opts['output-file']);
  process.stderr.write(`sim-run-batch: ${out.filter((l) => l.error === null).length} of ${out.length} requests answered, written to ${opts['output-file']}\n`);
}

main().catch((e) => {
  process.stderr.write(`sim-run-batch: ${e.message}\n`);
  process.exit(e instanceof Exit ? e.code : 2);
});
