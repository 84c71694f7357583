import { z } from 'zod';
import { traceCarrierSchema } from './trace-carrier';

/** The BullMQ queue runs wait in; the orchestrator produces, runners consume. */
export const DEFAULT_RUN_QUEUE = 'conveyor-runs';

export const runJobSchema = z.object({
  runId: z.string().uuid(),
  execution: z.number().int().positive(),
  /** The trace the run was started in (outbox row → job data → runner); a malformed one is dropped, never fatal. */
  trace: traceCarrierSchema.optional().catch(undefined),
});
export type RunJob = z.infer<typeof runJobSchema>;

/** One job per execution: enqueueing the same execution twice (outbox retries) is a no-op in BullMQ (IDs may not contain ':'). */
export const runJobId = (job: RunJob): string => `${job.runId}-e${job.execution}`;
