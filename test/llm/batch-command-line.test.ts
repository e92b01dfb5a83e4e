import { describe, expect, it } from 'vitest';
import { EndpointConfig } from '../../schemas/config.js';
import { commandArgv, needsShell, splitWords } from '../../src/llm/providers/batch/command-line.js';

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
