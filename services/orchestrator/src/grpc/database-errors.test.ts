import { toAppError } from './database-errors';

const prismaError = (code: string) =>
  Object.assign(new Error('x'), { name: 'PrismaClientKnownRequestError', code });

describe('toAppError', () => {
  it('maps database races and pool exhaustion to typed API errors', () => {
    expect(toAppError(prismaError('P2025')).code).toBe('resource_not_found');
    expect(toAppError(prismaError('P2002')).code).toBe('conflict');
    expect(toAppError(prismaError('P2028')).code).toBe('resource_unavailable');
  });

  it('answers an unreachable database as the retryable resource_unavailable (gRPC UNAVAILABLE), not a 500', () => {
    for (const code of ['P1001', 'P1017', 'P2024']) {
      const err = toAppError(prismaError(code));
      expect([err.code, err.retryable, err.httpStatus]).toEqual(['resource_unavailable', true, 503]);
    }
  });

  it('keeps anything else internal', () => {
    expect(toAppError(prismaError('P9999')).code).toBe('internal_error');
    expect(toAppError(new Error('boom')).code).toBe('internal_error');
  });
});
