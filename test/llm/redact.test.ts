import { describe, expect, it } from 'vitest';
import { createRedactor, REDACTED, redactDeep, redactSecrets, secretValues } from '../../src/util/redact.js';

const env = {
  OPENAI_API_KEY: 'sk-live-abcdef123456',
  DB_PASSWORD: 'hunter22',
  GITHUB_TOKEN: 'ghp_tokenvalue',
  AWS_SECRET_ACCESS_KEY: 'aws/secret+value',
  MY_CREDENTIALS: 'cred-123456',
  SHORT_KEY: 'abc', // too short to redact safely
  HOME: '/home/someone-long', // name is not secret-ish
  lower_api_key: 'lowercase-secret',
};

describe('redactSecrets', () => {
  it('replaces values of secret-named variables', () => {
    const text = 'key=sk-live-abcdef123456 pw=hunter22 t=ghp_tokenvalue a=aws/secret+value c=cred-123456 l=lowercase-secret';
    const out = redactSecrets(text, env);
    for (const v of ['sk-live-abcdef123456', 'hunter22', 'ghp_tokenvalue', 'aws/secret+value', 'cred-123456', 'lowercase-secret']) expect(out).not.toContain(v);
    expect(out.split(REDACTED).length - 1).toBe(6);
  });

  it('leaves short values and non-secret names alone', () => {
    expect(redactSecrets('abc in /home/someone-long', env)).toBe('abc in /home/someone-long');
  });

  it('replaces a longer secret whole even when it contains a shorter one', () => {
    const out = redactSecrets('X=supersecret-extended', { A_KEY: 'supersecret', B_KEY: 'supersecret-extended' });
    expect(out).toBe(`X=${REDACTED}`);
  });

  it('redacts bearer tokens even when the env does not know them', () => {
    expect(redactSecrets('Authorization: Bearer sk-unknown-999999', {})).toBe(`Authorization: Bearer ${REDACTED}`);
  });

  it('lists secrets longest first', () => {
    expect(secretValues({ A_KEY: 'aaaaaa', B_TOKEN: 'bbbbbbbbb' })).toEqual(['bbbbbbbbb', 'aaaaaa']);
  });
});

describe('redactDeep', () => {
  it('redacts nested strings and keys without mutating the input', () => {
    const input = { a: ['x hunter22 y', { b: 'hunter22' }], n: 5, ok: true, nil: null, hunter22: 1 };
    const out = redactDeep(input, env);
    expect(out).toEqual({ a: [`x ${REDACTED} y`, { b: REDACTED }], n: 5, ok: true, nil: null, [REDACTED]: 1 });
    expect(input.a[0]).toBe('x hunter22 y');
  });

  it('keeps the message of an Error, redacted', () => {
    const out = redactDeep({ err: new Error('bad key sk-live-abcdef123456') }, env) as unknown as { err: { message: string; stack: string } };
    expect(out.err.message).toBe(`bad key ${REDACTED}`);
    expect(out.err.stack).not.toContain('sk-live-abcdef123456');
  });

  it('survives cycles', () => {
    const a: Record<string, unknown> = { s: 'hunter22' };
    a.self = a;
    const out = redactDeep(a, env) as Record<string, unknown>;
    expect(out.s).toBe(REDACTED);
    expect(out.self).toBe(out);
  });

  it('redacts extra secrets whatever their variable is called', () => {
    const r = createRedactor({}, ['plain-named-value']);
    expect(r.text('v=plain-named-value')).toBe(`v=${REDACTED}`);
  });
});
