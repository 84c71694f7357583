import { z } from './zod';

/**
 * The registration fields of an integration whose deliveries start runs (a GitHub App, a Linear integration): the
 * runs' environment and the label that starts one. `labelStarts` ends the label's description: "A label that starts a
 * run when …".
 */
export const integrationRunFields = (labelStarts: string) => ({
  environment_id: z.string().max(100).optional().describe("Runs' environment (default: the team's default)"),
  trigger_label: z
    .string()
    .min(1)
    .max(50)
    .optional()
    .describe(`A label that starts a run when ${labelStarts}`),
});
