import { z } from './zod';
import { RUN_STATES } from '@conveyor/run-events';

/** RFC 7807 problem body (contract §0.7); extension members (`errors`, `provider`, ...) are allowed. */
export const problemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    error: z.string(),
    detail: z.string().optional(),
    instance: z.string().optional(),
    retryable: z.boolean().optional(),
    trace_id: z.string().optional(),
  })
  .passthrough()
  .openapi('Problem');

/** UserProfile (contract §0.11): every key optional. */
export const userProfileSchema = z
  .object({
    uid: z.string().optional(),
    display_name: z.string().optional(),
    email: z.string().optional(),
    photo_url: z.string().optional(),
    type: z.enum(['user', 'service_account']).optional(),
  })
  .openapi('UserProfile');

export const scopeSchema = z
  .object({ type: z.enum(['User', 'Team']), uid: z.string().optional() })
  .openapi('Scope');

export const runStateSchema = z.enum(RUN_STATES).openapi('RunState');
export const modeSchema = z.enum(['normal', 'plan', 'orchestrate']).openapi('Mode');

/** Objects whose keys belong to the caller (configs, artifact data, triggers): any JSON object. */
export const jsonObjectSchema = z.record(z.unknown());
