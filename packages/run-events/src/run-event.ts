import { z } from 'zod';

export const RUN_STATES = [
  'QUEUED',
  'PENDING',
  'CLAIMED',
  'INPROGRESS',
  'SUCCEEDED',
  'FAILED',
  'ERROR',
  'BLOCKED',
  'CANCELLED',
] as const;
export type RunStateName = (typeof RUN_STATES)[number];
export const TERMINAL_STATES: ReadonlySet<RunStateName> = new Set([
  'SUCCEEDED',
  'FAILED',
  'ERROR',
  'BLOCKED',
  'CANCELLED',
]);

const text = z.string().max(1_000_000);

/** The run-wide sandbox limits whose breach ends a run (docs/sandbox.md). */
export const SANDBOX_LIMITS = ['timeout', 'memory', 'processes', 'disk'] as const;
export type SandboxLimitName = (typeof SANDBOX_LIMITS)[number];

/** An environment snapshot's state for one team: none yet (or dropped), being made, kept, or its making failed. */
export const SNAPSHOT_STATES = ['none', 'building', 'ready', 'failed'] as const;
export type SnapshotStateName = (typeof SNAPSHOT_STATES)[number];

/**
 * Everything that happens in a run, as stored in RunEvent (kind + data). Runners emit the harness-side kinds;
 * the orchestrator itself records state changes and follow-up routing. Timeline, conversation and transcript
 * are all views over this one log.
 */
export const runEventSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('state_changed'),
    from: z.enum(RUN_STATES).nullable(),
    to: z.enum(RUN_STATES),
    message: z.string().optional(),
    error_code: z.string().optional(),
  }),
  z.object({
    kind: z.literal('setup_step'),
    step: z.enum(['workspace', 'repositories', 'setup_commands', 'attachments', 'harness_start']),
    status: z.enum(['started', 'succeeded', 'failed']),
    detail: z.string().optional(),
  }),
  z.object({ kind: z.literal('user_message'), text, source: z.enum(['prompt', 'followup']) }),
  z.object({ kind: z.literal('agent_message'), text }),
  z.object({ kind: z.literal('tool_call'), call_id: z.string(), name: z.string(), input: z.unknown() }),
  z.object({
    kind: z.literal('tool_result'),
    call_id: z.string(),
    output: z.unknown(),
    is_error: z.boolean().optional(),
  }),
  z.object({
    kind: z.literal('artifact'),
    artifact_type: z.enum(['PLAN', 'PULL_REQUEST', 'SCREENSHOT', 'FILE', 'EXTERNAL_REFERENCE']),
    data: z.record(z.unknown()),
  }),
  z.object({
    kind: z.literal('usage'),
    input_tokens: z.number().int().nonnegative().optional(),
    output_tokens: z.number().int().nonnegative().optional(),
    cost_usd: z.number().nonnegative().optional(),
  }),
  z.object({ kind: z.literal('log'), level: z.enum(['debug', 'info', 'warn', 'error']), text }),
  // The run's agent was lost with its sandbox: the run went on from its last turn (`resumed`), or, with no checkpoint
  // or at the resumption cap, ended (docs/run-lifecycle.md "Lost agents"). `text`: the timeline's sentence.
  z.object({
    kind: z.literal('agent_lost'),
    cause: text,
    turn: z.number().int().nonnegative(),
    resumption: z.number().int().nonnegative(),
    resumed: z.boolean(),
    text,
  }),
  z.object({
    kind: z.literal('followup_received'),
    followup_id: z.string(),
    routed_to: z.enum(['queued_input', 'live_harness', 'new_execution', 'debug_session']),
  }),
  // A follow-up accepted while the run was running that its harness never took before the run ended: cancelled, or
  // its runner lost mid-agent (docs/run-lifecycle.md "Follow-ups a run ends without").
  z.object({
    kind: z.literal('followup_not_delivered'),
    followup_id: z.string(),
    reason: z.enum(['run_cancelled', 'runner_lost']),
  }),
  // The sandbox refused a connection the run attempted (an address outside its egress allow-list).
  z.object({
    kind: z.literal('egress_refused'),
    host: z.string(),
    port: z.number().int(),
    reason: z.string(),
  }),
  // The execution's sandbox was torn down: the disk its workspace used and, when one did, the limit that ended it.
  z.object({
    kind: z.literal('workspace_released'),
    disk_bytes: z.number().int().nonnegative(),
    kept_for_debug: z.boolean(),
    limit: z.enum(SANDBOX_LIMITS).optional(),
  }),
  // What became of the environment's snapshot for the run's team (docs/snapshots.md "State"): the runner's own report
  // (a harness cannot claim one), kept by the orchestrator as the environment's `snapshot` in the API.
  z.object({
    kind: z.literal('environment_snapshot'),
    state: z.enum(SNAPSHOT_STATES),
    snapshot_id: z.string().max(64).optional(),
  }),
]);

export type RunEvent = z.infer<typeof runEventSchema>;
export type RunEventKind = RunEvent['kind'];

/** Kinds that belong on the timeline (lifecycle and setup) rather than in the conversation. */
export const TIMELINE_KINDS: ReadonlySet<RunEventKind> = new Set([
  'state_changed',
  'setup_step',
  'followup_received',
  'followup_not_delivered',
  'egress_refused',
  'workspace_released',
  'agent_lost',
]);

/** Kinds only the platform records: a harness's output claiming one is not believed. */
export const PLATFORM_KINDS: ReadonlySet<RunEventKind> = new Set([
  'state_changed',
  'environment_snapshot',
  'followup_received',
  'followup_not_delivered',
  'egress_refused',
  'workspace_released',
  'agent_lost',
]);
