import { parseDemoDirectives } from './demo-directives';

describe('demo directives', () => {
  it('parses every verb in order and ignores prose', () => {
    const text = [
      'Please fix the bug.',
      '@demo message Looking at the code',
      '@demo sleep 250',
      '@demo tool bash {"cmd":"ls"} => {"stdout":"a"}',
      '@demo artifact PULL_REQUEST {"url":"https://git.example/pr/1","branch":"fix"}',
      '@demo usage 120 40',
      '@demo await-followup 5000',
      '@demo block needs approval',
      '@demo fail tests failed',
      '@demo error boom',
      '@demo setup-fail clone failed',
      '@demo attachments',
    ].join('\n');
    expect(parseDemoDirectives(text)).toEqual([
      { verb: 'message', text: 'Looking at the code' },
      { verb: 'sleep', ms: 250 },
      { verb: 'tool', name: 'bash', input: { cmd: 'ls' }, output: { stdout: 'a' } },
      {
        verb: 'artifact',
        artifactType: 'PULL_REQUEST',
        data: { url: 'https://git.example/pr/1', branch: 'fix' },
      },
      { verb: 'usage', inputTokens: 120, outputTokens: 40 },
      { verb: 'await-followup', timeoutMs: 5000 },
      { verb: 'block', message: 'needs approval' },
      { verb: 'fail', message: 'tests failed' },
      { verb: 'error', message: 'boom' },
      { verb: 'setup-fail', message: 'clone failed' },
      { verb: 'attachments' },
    ]);
  });

  it('defaults tool output and caps sleeps', () => {
    expect(parseDemoDirectives('@demo tool read_file')).toEqual([
      { verb: 'tool', name: 'read_file', input: {}, output: { ok: true } },
    ]);
    expect(parseDemoDirectives('@demo sleep 99999999')).toEqual([{ verb: 'sleep', ms: 600_000 }]);
  });

  it('rejects malformed directives loudly', () => {
    expect(() => parseDemoDirectives('@demo teleport')).toThrow(/unknown directive/);
    expect(() => parseDemoDirectives('@demo artifact MOVIE {}')).toThrow(/unknown type/);
    expect(() => parseDemoDirectives('@demo tool x {not json')).toThrow(/expected JSON/);
  });
});
