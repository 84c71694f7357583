import { z } from 'zod';
import { AppError } from '@conveyor/errors';

function firstIssue(error: z.ZodError, where: string): AppError {
  const issue = error.issues[0];
  const path = issue?.path.join('.') || where;
  return new AppError('invalid_request', `${path}: ${issue?.message ?? 'invalid'}`, {
    details: { errors: error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })) },
  });
}

/** Query-string validation at the edge: the first problem in the message, all of them in `errors`. */
export function parseQuery<T extends z.ZodTypeAny>(schema: T, query: unknown): z.infer<T> {
  const result = schema.safeParse(query);
  if (!result.success) throw firstIssue(result.error, 'query');
  return result.data;
}

export function parseBody<T extends z.ZodTypeAny>(schema: T, body: unknown): z.infer<T> {
  const result = schema.safeParse(body ?? {});
  if (!result.success) throw firstIssue(result.error, 'body');
  return result.data;
}
