import type { z } from 'zod';

/** A zod error as `path message` lines, the form every definition error takes. */
export function zodMessages(error: z.ZodError): string[] {
  return error.issues.map((issue) => {
    const path = issue.path.join('.');
    const message =
      issue.code === 'unrecognized_keys' ? `unknown key(s) ${issue.keys.join(', ')}` : issue.message;
    return path ? `${path} ${message}` : message;
  });
}
