import { REDACTED, SecretRedactor } from './secret-redactor';

describe('SecretRedactor', () => {
  const key = 'sk-ant-api03-secret"value\\0123';

  it('replaces a known secret in text, JSON values and bytes, including its JSON-escaped form', () => {
    const redactor = new SecretRedactor();
    redactor.add(key);
    expect(redactor.text(`key=${key}; again ${key}`)).toBe(`key=${REDACTED}; again ${REDACTED}`);
    expect(redactor.json({ kind: 'tool_result', output: { stdout: `export KEY=${key}\n` } })).toEqual({
      kind: 'tool_result',
      output: { stdout: `export KEY=${REDACTED}\n` },
    });
    const line = Buffer.concat([Buffer.from([0xff]), Buffer.from(JSON.stringify({ text: key }))]);
    const clean = redactor.buffer(line);
    expect(clean[0]).toBe(0xff);
    expect(clean.toString('utf8')).not.toContain('secret');
    expect(clean.toString('utf8')).toContain(REDACTED);
  });

  it('leaves values without secrets untouched and ignores values too short to be keys', () => {
    const redactor = new SecretRedactor();
    const event = { kind: 'agent_message', text: 'hello' };
    expect(redactor.json(event)).toBe(event);
    redactor.add('abc');
    expect(redactor.text('abcabc')).toBe('abcabc');
  });
});
