import { toAppError } from './database-errors';

const prismaError = (code: string) =>
  Object.assign(new Error('x'), { name: 'PrismaClientKnownRequestError', code });

describe('toAppError', () => {
  it('maps database races and pool exhaustion to typed API errors', () => {
    expect(toAppError(prismaError('P2025')).code).toBe('resource_not_found');
    expect(toAppError(prismaError('P2002')).code).toBe('conflict');
    expect(toAppError(prismaError('P2028')).code).toBe('resource_unavailable');
  });

  it('keeps anything else internal', () => {
    expect(toAppError(prismaError('P9999')).code).toBe('internal_error');
    expect(toAppError(new Error('boom')).code).toBe('internal_error');
  });
});
