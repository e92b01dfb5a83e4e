/**
 * Structured-output dialects end to end: the real `openai` client against a scripted server per
 * dialect (test/llm/helpers/dialect-servers.ts), each taking only its own request shape. With
 * `response_format: auto` the endpoint's dialect is probed once and every structured call sends
 * its own schema in it, while free-text deliberation turns carry none; 3 jurors + consolidation
 * and a deliberation give schema-valid verdicts on every server. A configured dialect the server
 * rejects fails each juror after one attempt, naming the setting.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JuryConfigInput } from '../../schemas/config.js';
import type { TraceRecord } from '../../schemas/trace.js';
import { Verdict } from '../../schemas/verdict.js';
import { PROBE_PROMPT } from '../../src/llm/dialect-probe.js';
import { AUTO_ORDER, type Dialect } from '../../src/llm/dialect.js';
import { buildGoldIndex, createSimProvider } from '../../src/sim/index.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { configureLogging } from '../../src/util/log.js';
import { deliberationJury, profileWith, readAudit } from '../deliberation/helpers.js';
import { judgeAll, juryOn, withRuntime } from '../helpers/jury.js';
import { SERVER_KINDS, startDialectServer, type DialectRequest, type DialectServer, type ServerKind } from './helpers/dialect-servers.js';

const EXPECTED: Record<ServerKind, Dialect> = {
  openai: 'json_schema',
  'llama-cpp-python': 'json_object_schema',
  'llama.cpp': 'json_object_schema',
  'vllm-guided': 'guided_json',
  'json-mode': 'json_object',
  plain: 'none',
};
const JURORS = ['jury-0', 'jury-1', 'jury-2'];

let logLines: string[] = [];
beforeEach(() => {
  logLines = [];
  configureLogging({ format: 'text', debug: false }, (l) => logLines.push(l));
});
afterEach(() => configureLogging({ format: 'text', debug: false }));

async function onServer<T>(kind: ServerKind, records: readonly TraceRecord[], fn: (s: DialectServer) => Promise<T>): Promise<T> {
  const model = createSimProvider({ profile: profileWith(), gold: buildGoldIndex(records) });
  const server = await startDialectServer(kind, model);
  try {
    return await fn(server);
  } finally {
    await server.close();
  }
}

const isProbe = (r: DialectRequest) => (r.body.messages as Array<{ content: string }>)[0]?.content === PROBE_PROMPT;
const audited = () => join(mkdtempSync(join(tmpdir(), 'rj-dialect-')), 'audit.jsonl');

/** The schema a request carries in `d`, or undefined; throws when it carries some other dialect's field. */
function carried(r: DialectRequest, d: Dialect): Record<string, unknown> | 'json_mode' | undefined {
  const f = r.body.response_format as Record<string, unknown> | undefined;
  const g = r.body.guided_json as Record<string, unknown> | undefined;
  const shape = g ? 'guided_json' : !f ? 'none' : f.type === 'json_schema' ? 'json_schema' : 'schema' in f ? 'json_object_schema' : 'json_object';
  if (shape === 'none') return undefined;
  expect(shape).toBe(d);
  if (shape === 'json_object') return 'json_mode';
  return (g ?? (f!.json_schema as Record<string, unknown> | undefined)?.schema ?? f!.schema) as Record<string, unknown>;
}

/** Probes come first, once; after them every request was accepted. Returns the requests after the probes. */
function afterProbe(server: DialectServer, kind: ServerKind): DialectRequest[] {
  const probes = server.requests.filter(isProbe);
  expect(probes.length).toBeGreaterThanOrEqual(1);
  expect(probes.length).toBeLessThanOrEqual(AUTO_ORDER.length);
  expect(server.requests.slice(0, probes.length)).toEqual(probes);
  const chosen = logLines.filter((l) => l.includes('response_format auto chose'));
  expect(chosen).toHaveLength(1);
  expect(chosen[0]).toContain(`endpoint "sim": response_format auto chose ${EXPECTED[kind]}`);
  const rest = server.requests.slice(probes.length);
  expect(rest.filter((r) => r.status !== 200)).toEqual([]);
  return rest;
}

function expectSound(v: Verdict): void {
  expect(Verdict.parse(v)).toEqual(v);
  expect(v.error).toBeNull();
  expect(v.degraded).toBe(false);
  expect(v.phase1_judgements.map((j) => j.juror_id)).toEqual(JURORS);
  expect(v.phase1_judgements.every((j) => j.ok)).toBe(true);
}

describe('response_format auto against each dialect', () => {
  const records = syntheticRecords(4, { seed: 23, minSteps: 4, maxSteps: 6 });

  it.each(SERVER_KINDS)('%s: 3 jurors + consolidation, every structured call in the chosen dialect', async (kind) => {
    const audit = audited();
    const verdicts = await onServer(kind, records, (s) => withRuntime(juryOn(s.url, {}, { response_format: 'auto' }), (rt) => judgeAll(rt, records, 4), audit).then((v) => ({ v, s })));
    for (const v of verdicts.v) {
      expectSound(v);
      expect(v.mode).toBe('consolidation');
    }
    const rest = afterProbe(verdicts.s, kind);
    const lines = readAudit(audit);
    expect(lines.every((l) => l.kind.startsWith('structured:'))).toBe(true);
    expect(rest).toHaveLength(lines.length);
    const schemas = rest.map((r) => carried(r, EXPECTED[kind]));
    if (kind === 'plain') expect(schemas.every((s) => s === undefined)).toBe(true);
    else if (kind === 'json-mode') expect(schemas.every((s) => s === 'json_mode')).toBe(true);
    else {
      // Jurors and consolidator both answer JudgementOutput: one schema, sent with every call.
      expect(schemas.every((s) => typeof s === 'object')).toBe(true);
      expect(new Set(schemas.map((s) => JSON.stringify(s))).size).toBe(1);
      expect(schemas[0]).toMatchObject({ type: 'object', required: expect.arrayContaining(['negatives']) });
    }
  });

  it.each(SERVER_KINDS)('%s: a deliberation; juror turns stay prose, the moderator gets its two schemas', async (kind) => {
    const audit = audited();
    const cfg: JuryConfigInput = deliberationJury('http://placeholder.invalid/v1', {}, { response_format: 'auto' });
    const out = await onServer(kind, records, async (s) => {
      const c = { ...cfg, endpoints: { sim: { ...(cfg.endpoints!.sim as Record<string, unknown>), base_url: s.url } } } as JuryConfigInput;
      return { v: await withRuntime(c, (rt) => judgeAll(rt, records, 4), audit), s };
    });
    for (const v of out.v) {
      expectSound(v);
      expect(v.mode).toBe('deliberation');
      expect(v.transcript.length).toBeGreaterThan(0);
    }
    const rest = afterProbe(out.s, kind);
    const lines = readAudit(audit);
    expect(rest).toHaveLength(lines.length);
    const turns = lines.filter((l) => l.kind === 'text');
    expect(turns.length).toBeGreaterThan(0);
    expect(turns.every((l) => l.phase === 'juror_turn')).toBe(true);
    const withField = rest.filter((r) => carried(r, EXPECTED[kind]) !== undefined);
    if (kind === 'plain') {
      expect(withField).toEqual([]);
      return;
    }
    // Every structured call carries its format, no free-text turn does.
    expect(withField).toHaveLength(lines.length - turns.length);
    const moderatorSchemas = new Set(withField.filter((r) => r.body.model === 'sim-moderator').map((r) => JSON.stringify(carried(r, EXPECTED[kind]))));
    // ModeratorDecision and ExtractionOutput, each in its own call (JSON mode carries no schema).
    expect(moderatorSchemas.size).toBe(kind === 'json-mode' ? 1 : 2);
  });
});

describe('a dialect the server rejects', () => {
  const records = syntheticRecords(2, { seed: 29, minSteps: 4, maxSteps: 5 });
  const cases: Array<[ServerKind, string, string]> = [
    ['llama-cpp-python', 'json_schema', 'response_format.type'],
    ['llama.cpp', 'json_schema', 'response_format'],
    ['openai', 'guided_json', 'guided_json'],
    ['json-mode', 'json_object_schema', 'response_format.schema'],
    ['plain', 'json_object', 'response_format'],
  ];
  it.each(cases)('%s given %s: each juror tried once, the error names the field and endpoints.sim.response_format', async (kind, format, field) => {
    const audit = audited();
    const { v, s } = await onServer(kind, records, async (s) => ({ v: await withRuntime(juryOn(s.url, {}, { response_format: format, max_retries: 4 }), (rt) => judgeAll(rt, records, 2), audit), s }));
    for (const verdict of v) {
      expect(verdict.error).not.toBeNull();
      for (const j of verdict.phase1_judgements) {
        expect(j.ok).toBe(false);
        expect(j.error).toContain('failed after 1 attempt(s)');
        expect(j.error).toContain(`request field "${field}"`);
        expect(j.error).toContain('change endpoints.sim.response_format');
      }
    }
    // One request per juror and record: no retry, no re-ask, no probe.
    expect(s.requests).toHaveLength(records.length * JURORS.length);
    expect(s.requests.every((r) => r.status >= 400)).toBe(true);
    expect(readAudit(audit).map((l) => l.outcome)).toEqual(s.requests.map(() => 'error'));
  });
});
