import type { RunEvent } from '@conveyor/run-events';
import type { EnvironmentSpec, FetchRepository } from '../environment-setup';
import {
  SetupFailure,
  type DurableAgent,
  type Harness,
  type HarnessContext,
  type HarnessInput,
  type HarnessOutcome,
} from '../harness/harness';
import type { ModelAccessGrant } from '../model-proxy/model-access-grant';
import { baseRunEnvironment } from '../sandbox/run-environment';
import { insideApiBaseUrl } from './run-policy';
import type { RunSandbox } from '../sandbox/run-sandbox';
import { safeFileName } from '../workspace';
import { prepareEnvironment } from './environment-preparation';
import { resumeMessage } from './agent-resumption';
import { reportStep, type Completion, type ExecutionContext, type SetupStep } from './execution-context';
import { TurnCheckpointer, type RunCheckpoint } from './turn-checkpoints';

/** What the harness did, with what it was given: the after-run work reads the same environment. */
export interface HarnessRun {
  input: HarnessInput;
  env: Record<string, string>;
  outcome: HarnessOutcome;
}

function harnessInput(ctx: ExecutionContext, sandbox: RunSandbox, apiBaseUrl: string): HarnessInput {
  const { assignment } = ctx;
  return {
    runId: assignment.run_id,
    execution: assignment.execution,
    prompt: assignment.prompt,
    followups: assignment.followups,
    config: JSON.parse(assignment.config_json || '{}') as Record<string, unknown>,
    mode: assignment.mode,
    debugSession: assignment.debug_session,
    workspaceDir: sandbox.workspaceDir,
    runApiKey: assignment.run_api_key,
    apiBaseUrl,
    skillInstructions: assignment.skill_instructions,
    attachments: assignment.attachments.map((a) => safeFileName(a.file_name)),
    ...(assignment.session
      ? { session: { path: assignment.session.path, content: Buffer.from(assignment.session.content) } }
      : {}),
  };
}

/** Told when the agent's process starts durable: the executor keeps the record a restarted runner resumes from. */
/** Told when the agent started durable, with the sandbox it runs in (whose `reopenSecret` its record keeps). */
export type OnDurable = (
  agent: Parameters<NonNullable<HarnessContext['durable']>>[0],
  sandbox: RunSandbox,
) => void;

/** The run's environment inside the sandbox and the harness's input (with its model access). */
function harnessSetup(ctx: ExecutionContext, sandbox: RunSandbox, grant: ModelAccessGrant | undefined) {
  const { assignment } = ctx;
  const apiBaseUrl = insideApiBaseUrl(sandbox, assignment.api_base_url);
  const env = baseRunEnvironment({
    runId: assignment.run_id,
    workspaceDir: sandbox.workspaceDir,
    runApiKey: assignment.run_api_key,
    apiBaseUrl,
  });
  const input = harnessInput(ctx, sandbox, apiBaseUrl);
  input.modelAccess = grant?.access(sandbox, input.config);
  return { env, input };
}

/** Where the run's turns are checkpointed, and how many its agent completed before this process. */
export interface Checkpointing {
  checkpoint: RunCheckpoint;
  turns: number;
}

function harnessContext(
  ctx: ExecutionContext,
  grant: ModelAccessGrant | undefined,
  sandbox: RunSandbox,
  env: Record<string, string>,
  onDurable: OnDurable | undefined,
  checkpointer: TurnCheckpointer | undefined,
): HarnessContext {
  // With model access through the proxy, the proxy's metering is the run's usage; the CLI's own count would double it.
  const emit = (event: RunEvent) => (grant && event.kind === 'usage' ? undefined : ctx.reporter.emit(event));
  const mark = (phase: string) => ctx.trace.mark(phase);
  return {
    emit,
    inbox: ctx.inbox,
    signal: ctx.signal,
    sandbox,
    env,
    mark,
    ...(onDurable ? { durable: (agent) => onDurable(agent, sandbox) } : {}),
    ...(checkpointer ? { turn: (mark) => checkpointer.turn(mark) } : {}),
  };
}

/**
 * Runs the harness, checkpointing the workspace after each turn its agent completes; a copy still running when the
 * harness ends (or its sandbox is lost) is waited for, so the run goes on from the latest turn.
 */
async function runCheckpointed(
  ctx: ExecutionContext,
  grant: ModelAccessGrant | undefined,
  sandbox: RunSandbox,
  env: Record<string, string>,
  onDurable: OnDurable | undefined,
  checkpointing: Checkpointing | undefined,
  run: (hctx: HarnessContext) => Promise<HarnessOutcome>,
): Promise<HarnessOutcome> {
  const checkpointer =
    checkpointing &&
    new TurnCheckpointer(
      checkpointing.checkpoint,
      () => ({ sandbox, env }),
      checkpointing.turns,
      (err) => ctx.log.warn({ err }, 'turn checkpoint not taken'),
    );
  try {
    return await run(harnessContext(ctx, grant, sandbox, env, onDurable, checkpointer));
  } finally {
    await checkpointer?.settled();
  }
}

/**
 * Prepares the environment and the harness in the sandbox (PENDING), then runs the agent (INPROGRESS) to its
 * outcome. A setup failure fails the run with `setupFailed` (its workspace is kept for a debug session).
 */
export async function driveHarness(
  ctx: ExecutionContext,
  harness: Harness,
  grant: ModelAccessGrant | undefined,
  sandbox: RunSandbox,
  environment: EnvironmentSpec,
  fetchRepository: FetchRepository,
  onDurable?: OnDurable,
  checkpointing?: Checkpointing,
): Promise<{ ran: HarnessRun } | { failed: Completion }> {
  const { assignment, reporter } = ctx;
  const debug = assignment.debug_session;
  let input: HarnessInput;
  let env: Record<string, string>;
  let current: SetupStep['step'] = 'setup_commands';
  try {
    ({ input, env } = harnessSetup(ctx, sandbox, grant));
    await prepareEnvironment(ctx, environment, sandbox, env, fetchRepository);
    current = 'harness_start';
    reportStep(ctx, 'harness_start', 'started', assignment.harness);
    await harness.prepare(input);
    reportStep(ctx, 'harness_start', 'succeeded');
  } catch (err) {
    if (!(err instanceof SetupFailure)) throw err;
    reportStep(ctx, current, 'failed', err.message);
    return {
      failed: {
        state: 'FAILED',
        message: err.message,
        errorCode: 'environment_setup_failed',
        setupFailed: true,
      },
    };
  }
  if (!debug) reporter.emit({ kind: 'state_changed', from: 'PENDING', to: 'INPROGRESS' });
  await reporter.flush();
  ctx.trace.mark('harness_started');
  const outcome = await runCheckpointed(ctx, grant, sandbox, env, onDurable, checkpointing, (hctx) => {
    const running = harness.run(input, hctx);
    ctx.inbox.startedWith();
    return running;
  });
  ctx.trace.mark('harness_finished');
  return { ran: { input, env, outcome } };
}

/**
 * Goes on from the run's last checkpoint in a new sandbox after its agent was lost (docs/run-lifecycle.md "Lost
 * agents"): the workspace as it was at that turn, the session it holds continued with a message saying so. No
 * environment setup: the checkpoint is the workspace it prepared.
 */
export async function resumeFromCheckpoint(
  ctx: ExecutionContext,
  harness: Harness,
  grant: ModelAccessGrant | undefined,
  sandbox: RunSandbox,
  checkpointing: Checkpointing,
  cause: string,
  onDurable?: OnDurable,
): Promise<{ ran: HarnessRun } | { failed: Completion }> {
  const { input, env } = harnessSetup(ctx, sandbox, grant);
  try {
    await checkpointing.checkpoint.restore(sandbox, env);
  } catch (err) {
    const message = `The run's agent was lost (${cause}) and its checkpoint could not be restored: ${(err as Error).message}`;
    return { failed: { state: 'ERROR', message, errorCode: 'resource_unavailable' } };
  }
  ctx.trace.mark('workspace_restored');
  const resumed: HarnessInput = {
    ...input,
    followups: [resumeMessage(cause, checkpointing.turns)],
    session: undefined,
    resumeOnly: true,
  };
  await harness.prepare(resumed);
  const outcome = await runCheckpointed(ctx, grant, sandbox, env, onDurable, checkpointing, (hctx) =>
    harness.run(resumed, hctx),
  );
  ctx.trace.mark('harness_finished');
  return { ran: { input: resumed, env, outcome } };
}

/** Takes the harness back on the agent's durable process a previous runner process left (the run is INPROGRESS). */
export async function resumeHarness(
  ctx: ExecutionContext,
  resume: NonNullable<Harness['resume']>,
  grant: ModelAccessGrant | undefined,
  sandbox: RunSandbox,
  agent: DurableAgent,
  onDurable: OnDurable,
  checkpointing?: Checkpointing,
): Promise<HarnessRun> {
  const { input, env } = harnessSetup(ctx, sandbox, grant);
  const outcome = await runCheckpointed(ctx, grant, sandbox, env, onDurable, checkpointing, (hctx) =>
    resume(input, hctx, agent),
  );
  ctx.trace.mark('harness_finished');
  return { input, env, outcome };
}
