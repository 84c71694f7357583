import { AppError } from '@conveyor/errors';
import type { Request, Response } from 'express';
import { rejectNulCharacters } from './reject-nul-characters';

const run = (req: Partial<Request>): unknown => {
  let passed: unknown = 'not called';
  rejectNulCharacters(
    { body: undefined, query: {}, params: {}, ...req } as Request,
    {} as Response,
    (err?: unknown) => (passed = err),
  );
  return passed;
};

describe('rejectNulCharacters', () => {
  it('refuses U+0000 anywhere in the body, its keys or the query with invalid_request', () => {
    for (const req of [
      { body: { name: 'a\u0000b' } },
      { body: { harness: { ['k\u0000']: 1 } } },
      { body: [['x\u0000']] },
      { query: { q: '\u0000' } },
    ]) {
      const err = run(req as Partial<Request>);
      expect(err).toBeInstanceOf(AppError);
      expect(err).toMatchObject({ code: 'invalid_request' });
    }
  });

  it('lets everything else through, other control and non-ASCII characters included', () => {
    expect(
      run({ body: { name: 'caf\u00e9 \u0001 \ud83d\ude00', n: 1, ok: true, none: null } }),
    ).toBeUndefined();
  });
});
