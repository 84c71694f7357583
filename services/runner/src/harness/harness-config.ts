import { z } from 'zod';

/**
 * HARNESS_COMMANDS, read alike by the runner and the self-hosted worker program: agent CLIs by harness type, as a
 * JSON object such as {"claude": "node adapter.js"}.
 */
export const harnessCommands = z
  .string()
  .default('{}')
  .transform((raw, ctx) => {
    try {
      return z.record(z.string().min(1)).parse(JSON.parse(raw));
    } catch {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message: 'must be a JSON object of harness type → command',
      });
      return z.NEVER;
    }
  });
