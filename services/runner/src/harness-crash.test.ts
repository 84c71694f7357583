import { AppError } from '@conveyor/errors';
import { harnessCrashMessage } from './harness-crash';

describe('harnessCrashMessage', () => {
  it("names the error's class and code, never its message", () => {
    const secret = 'sk-live-abc123';
    const spawnFailure = Object.assign(new Error(`spawn failed with ANTHROPIC_API_KEY=${secret}`), {
      code: 'ENOENT',
    });
    expect(harnessCrashMessage(spawnFailure)).toBe('The agent harness crashed (Error ENOENT)');
    expect(harnessCrashMessage(new TypeError(`cannot read ${secret}`))).toBe(
      'The agent harness crashed (TypeError)',
    );
    expect(harnessCrashMessage(new AppError('internal_error', secret))).toBe(
      'The agent harness crashed (AppError internal_error)',
    );
  });

  it('leaves out a code or class that is free text, and anything thrown that is not an error', () => {
    const odd = Object.assign(new Error('x'), { code: 'token sk-live-abc123 refused' });
    odd.name = 'Error: with spaces';
    expect(harnessCrashMessage(odd)).toBe('The agent harness crashed');
    expect(harnessCrashMessage('sk-live-abc123')).toBe('The agent harness crashed');
    expect(harnessCrashMessage(null)).toBe('The agent harness crashed');
  });
});
