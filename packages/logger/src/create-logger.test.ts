import { Writable } from 'node:stream';
import { createLogger } from './create-logger';

describe('createLogger', () => {
  it('emits JSON with base fields and redacts credentials', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write: (chunk, _enc, cb) => {
        lines.push(String(chunk));
        cb();
      },
    });
    const logger = createLogger({ service: 'gateway', version: '1.2.3' }, sink);
    logger
      .child({ requestId: 'req-1' })
      .info({ headers: { authorization: 'Bearer abc' }, secret: 'x', runId: 'r1' }, 'hello');
    const entry = JSON.parse(lines[0]!);
    expect(entry).toMatchObject({
      service: 'gateway',
      version: '1.2.3',
      level: 'info',
      requestId: 'req-1',
      runId: 'r1',
      msg: 'hello',
    });
    expect(entry.secret).toBe('[redacted]');
    expect(entry.headers.authorization).toBe('[redacted]');
    expect(typeof entry.time).toBe('string');
  });
});
