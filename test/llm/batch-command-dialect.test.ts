/** The command dialect on its own: how a command that cannot answer its batch is reported. */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EndpointConfig } from '../../schemas/config.js';
import { commandDialect } from '../../src/llm/providers/batch/command-dialect.js';
import type { BatchInfo } from '../../src/llm/providers/batch/openai-dialect.js';
import { createRedactor } from '../../src/util/redact.js';
import { tempDir } from '../helpers/run-setup.js';

const dir = tempDir('command-dialect');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const INPUT = `${JSON.stringify({ custom_id: 'a', method: 'POST', url: '/v1/chat/completions', body: { model: 'm', messages: [] } })}\n`;

async function runOnce(command: string): Promise<BatchInfo> {
  const endpoint = EndpointConfig.parse({ base_url: 'http://127.0.0.1:9/v1', batch: { dialect: 'command', command, work_dir: join(dir, 'work') } });
  const dialect = commandDialect('gpu', endpoint, createRedactor({}), process.env);
  const signal = new AbortController().signal;
  const id = await dialect.upload(INPUT, signal);
  let info = await dialect.create(id, signal);
  while (info.state === 'in_progress') {
    await new Promise((r) => setTimeout(r, 20));
    info = await dialect.retrieve(id, signal);
  }
  return info;
}

describe('command dialect', () => {
  it('a program that does not exist fails its batch, saying so', async () => {
    const info = await runOnce('no-such-program-rj {input} {output}');
    expect(info.state).toBe('failed');
    expect(info.errors).toMatch(/batch command "no-such-program-rj \{input\} \{output\}" could not start \(spawn no-such-program-rj ENOENT\)/);
  });

  it('exit 0 without an output file fails its batch', async () => {
    const info = await runOnce(`${process.execPath} -e 0 {input}`);
    expect(info).toMatchObject({ state: 'failed', errors: expect.stringMatching(/exited with code 0 but wrote no \S+\.output\.jsonl/) });
  });

  it('the model placeholder is the batch\'s model, and the output file is what download reads', async () => {
    const info = await runOnce(`${process.execPath} -e "require('fs').writeFileSync(process.argv[2], process.argv[1])" {model} {output}`);
    expect(info.state).toBe('completed');
    const endpoint = EndpointConfig.parse({ base_url: 'http://127.0.0.1:9/v1', batch: { dialect: 'command', command: 'x', work_dir: join(dir, 'work') } });
    expect(await commandDialect('gpu', endpoint, createRedactor({})).download(info.output_file_id!, new AbortController().signal)).toBe('m');
  });
});
