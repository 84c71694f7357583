import { currentTraceCarrier } from '@conveyor/tracing';
import { AppError } from '@conveyor/errors';
import { newUuid, type Prisma, type PrismaClient, type Run } from '@conveyor/db';
import type { Caller } from '../auth/caller';
import type { RunEvent } from '@conveyor/run-events';
import { ENQUEUE_RUN } from './outbox-relay';
import { findRunForCaller } from './run-access';
import { isTerminal, transitionRun } from './run-state-machine';

export type FollowupRoute = 'queued_input' | 'live_harness' | 'new_execution' | 'debug_session';

export const SETUP_FAILED_CODE = 'environment_setup_failed';

/**
 * Where a follow-up goes, by the run's state: before start it joins the run's input; while a runner holds the run it
 * is delivered to the live harness; after the end it starts a new execution of the same run — except a run that
 * failed during environment setup inside its debug window, whose message goes to a debug agent in the retained
 * session while the run stays FAILED.
 */
export function routeFollowup(
  run: Pick<Run, 'state' | 'errorCode' | 'sessionDebugUntil' | 'debugExecution'>,
  now: Date,
): FollowupRoute {
  if (run.state === 'QUEUED') return 'queued_input';
  if (!isTerminal(run.state)) return 'live_harness';
  if (
    run.state === 'FAILED' &&
    run.errorCode === SETUP_FAILED_CODE &&
    run.sessionDebugUntil &&
    run.sessionDebugUntil > now
  ) {
    return 'debug_session';
  }
  return 'new_execution';
}

/**
 * An ended run goes on as its next execution (QUEUED, the outcome cleared, queued through the outbox); the caller
 * holds the run's row lock and gives the execution its input (follow-ups). Returns the new execution.
 */
export async function continueRun(tx: Prisma.TransactionClient, run: Run, now: Date): Promise<number> {
  const execution = run.execution + 1;
  await transitionRun(tx, run, run.state, 'QUEUED', {
    now,
    extra: {
      execution,
      statusMessage: null,
      errorCode: null,
      retryable: null,
      endedAt: null,
      sessionDebugUntil: null,
      runnerId: null,
      claimAttempts: 0,
    },
  });
  await tx.outboxEntry.create({
    data: { kind: ENQUEUE_RUN, payload: { runId: run.id, execution, trace: currentTraceCarrier() } },
  });
  return execution;
}

export async function submitFollowup(
  deps: { db: PrismaClient; kickOutbox: () => void },
  caller: Caller,
  input: { runId: string; message: string; mode?: string },
  now = new Date(),
): Promise<{ followup_id: string; routed_to: FollowupRoute; state: string }> {
  if (!input.message.trim()) throw new AppError('invalid_request', 'message is required');
  await findRunForCaller(deps.db, caller, input.runId);
  const followupId = newUuid();
  const result = await deps.db.$transaction(async (tx) => {
    // Serialize with claims and completions so the route is decided on the state that will actually apply. The
    // count is written, not only locked, so a completion waiting for this row sees that a follow-up came
    // (complete-run.ts `unheard`).
    await tx.$executeRaw`UPDATE "Run" SET "followupCount" = "followupCount" + 1 WHERE "id" = ${input.runId}::uuid`;
    const run = await tx.run.findUniqueOrThrow({ where: { id: input.runId } });
    const route = routeFollowup(run, now);
    let execution = run.execution;
    let enqueue = false;
    if (route === 'new_execution') {
      execution = await continueRun(tx, run, now);
      enqueue = true;
    } else if (route === 'debug_session' && run.debugExecution === null) {
      execution = run.execution + 1;
      await tx.run.update({
        where: { id: run.id },
        data: { execution, debugExecution: execution, runnerId: null, updatedAt: now },
      });
      enqueue = true;
    } else if (route === 'debug_session') {
      execution = run.debugExecution ?? run.execution;
    }
    await tx.runFollowup.create({
      data: {
        id: followupId,
        runId: run.id,
        message: input.message,
        mode: input.mode || 'normal',
        routedTo: route,
        execution,
        createdById: caller.principal_id,
        createdAt: now,
      },
    });
    const events: RunEvent[] = [
      { kind: 'followup_received', followup_id: followupId, routed_to: route },
      { kind: 'user_message', text: input.message, source: 'followup' },
    ];
    await tx.runEvent.createMany({
      data: events.map((e) => ({
        runId: run.id,
        execution,
        kind: e.kind,
        data: e as Prisma.InputJsonValue,
        createdAt: now,
      })),
    });
    if (route === 'debug_session' && enqueue)
      await tx.outboxEntry.create({
        data: { kind: ENQUEUE_RUN, payload: { runId: run.id, execution, trace: currentTraceCarrier() } },
      });
    const state = route === 'new_execution' ? 'QUEUED' : run.state;
    return { route, enqueue, state };
  });
  if (result.enqueue) deps.kickOutbox();
  return { followup_id: followupId, routed_to: result.route, state: result.state };
}
