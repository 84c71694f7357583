import { CLI_KINDS, harnessNameFromConfig, parseHarnessName } from './harness-kinds';

describe('parseHarnessName', () => {
  it('reads a built-in CLI, an operator adapter standing in for one, and other harnesses', () => {
    expect(parseHarnessName('claude')).toEqual({ type: 'claude', command: false, cli: 'claude' });
    expect(parseHarnessName('command:codex')).toEqual({ type: 'codex', command: true, cli: 'codex' });
    expect(parseHarnessName('command:aider')).toEqual({ type: 'aider', command: true, cli: undefined });
    expect(parseHarnessName('demo')).toEqual({ type: 'demo', command: false, cli: undefined });
  });

  it('does not take inherited object keys for CLIs', () => {
    expect(parseHarnessName('toString').cli).toBeUndefined();
  });
});

describe('harnessNameFromConfig', () => {
  it('maps absent and oz to the default harness and keeps any other type', () => {
    expect(harnessNameFromConfig({}, 'demo')).toBe('demo');
    expect(harnessNameFromConfig({ harness: { type: 'oz' } }, 'demo')).toBe('demo');
    expect(harnessNameFromConfig({ harness: { type: 'gemini' } }, 'demo')).toBe('gemini');
  });
});

it('gives every CLI its own secret field and default secret', () => {
  const kinds = Object.values(CLI_KINDS);
  expect(new Set(kinds.map((k) => k.secretField)).size).toBe(kinds.length);
  expect(new Set(kinds.map((k) => k.defaultSecretName)).size).toBe(kinds.length);
});
