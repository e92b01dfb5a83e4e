import { describe, expect, it } from 'vitest';
import { EndpointConfig } from '../../schemas/config.js';
import { commandArgv, needsShell, splitWords } from '../../src/llm/providers/batch/command-line.js';
import { parseResultFile } from '../../src/llm/providers/batch/lines.js';
import { createRedactor } from '../../src/util/redact.js';

const values = { input: '/tmp/a b/in.jsonl', output: "/tmp/it's/out.jsonl", model: 'Qwen/Qwen3-8B' };

describe('batch.command', () => {
  it('is split like a shell splits words, without one', () => {
    expect(splitWords(`vllm run-batch -i {input}  "two words" 'single \\ kept' a\\ b ""`)).toEqual(['vllm', 'run-batch', '-i', '{input}', 'two words', 'single \\ kept', 'a b', '']);
    expect(splitWords(`say "a \\"quoted\\" word" "back\\slash"`)).toEqual(['say', 'a "quoted" word', 'back\\slash']);
    expect(() => splitWords('say "open')).toThrow(/unclosed " quote/);
  });

  it('fills each placeholder inside its word: a path with spaces or quotes stays one argument', () => {
    expect(needsShell('vllm run-batch -i {input} -o {output} --model {model}')).toBe(false);
    expect(commandArgv('vllm run-batch -i {input} -o {output} --model {model} --tag=x-{model}', values)).toEqual(['vllm', 'run-batch', '-i', values.input, '-o', values.output, '--model', values.model, '--tag=x-Qwen/Qwen3-8B']);
  });

  it('runs a line with shell syntax under /bin/sh -c, the values single-quoted', () => {
    const argv = commandArgv('cd /srv && vllm run-batch -i {input} -o {output} 2>> log', values);
    expect(argv.slice(0, 2)).toEqual(['/bin/sh', '-c']);
    expect(argv[2]).toBe(`cd /srv && vllm run-batch -i '/tmp/a b/in.jsonl' -o '/tmp/it'\\''s/out.jsonl' 2>> log`);
  });

  it('is required for dialect command, and checked for open quotes', () => {
    const endpoint = (batch: Record<string, unknown>) => EndpointConfig.safeParse({ base_url: 'http://127.0.0.1:8000/v1', batch });
    const missing = endpoint({ dialect: 'command' });
    expect(missing.success).toBe(false);
    expect(missing.error!.issues[0]).toMatchObject({ path: ['batch', 'command'], message: expect.stringMatching(/batch\.command is required when batch\.dialect is "command"/) });
    expect(endpoint({ dialect: 'command', command: "vllm run-batch -i '{input}" }).error!.issues[0]!.message).toMatch(/unclosed quote/);
    expect(endpoint({ dialect: 'command', command: 'vllm run-batch -i {input} -o {output} --model {model}' }).success).toBe(true);
  });
});

describe('vLLM run-batch output lines', () => {
  const body = { id: 'c1', object: 'chat.completion', created: 0, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: '{}' }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } };
  const line = (custom_id: string, status: number | null, error: Record<string, unknown> | null, b: unknown = null) => JSON.stringify({ id: `vllm-${custom_id}`, custom_id, response: status === null ? null : { status_code: status, request_id: `r-${custom_id}`, body: b }, error });
  const err = (message: string) => ({ object: 'error', message, type: 'x', param: null, code: null });

  it('answer a call only with status 200 and no error; a failed line is retried unless it is a 4xx other than 429', () => {
    const text = [line('ok', 200, null, body), line('bad', 400, err('bad field')), line('busy', 503, err('overloaded')), line('odd', 200, err('decoding failed'), body), line('gone', null, err('no output')), '{torn'].join('\n');
    const r = parseResultFile(text, createRedactor({}), 'gpu');
    expect(r.get('ok')).toMatchObject({ ok: true, response: { content: '{}' } });
    expect(r.get('bad')).toMatchObject({ ok: false, error: { retryable: false, status: 400 } });
    for (const id of ['busy', 'odd', 'gone']) expect(r.get(id), id).toMatchObject({ ok: false, error: { retryable: true } });
    expect(r.size).toBe(5);
  });
});
