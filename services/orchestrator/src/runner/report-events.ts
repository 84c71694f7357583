import { AppError } from '@conveyor/errors';
import type { Prisma, PrismaClient, Run } from '@conveyor/db';
import type { RunnerControl } from './runner-messages';
import { runEventSchema, type RunEvent } from '@conveyor/run-events';
import { recordArtifact } from '../artifacts/record-artifact';
import { transitionRun } from '../runs/run-state-machine';
import { takeRunnerControl } from './runner-control';

/** Locks the run's row for the transaction and reads it, in one statement (Prisma's findUnique cannot lock). */
export async function lockRun(tx: Prisma.TransactionClient, runId: string): Promise<Run | undefined> {
  // Run's columns are its fields' names (no @map), so the raw row is a Run.
  const [run] = await tx.$queryRaw<Run[]>`SELECT * FROM "Run" WHERE "id" = ${runId}::uuid FOR UPDATE`;
  return run;
}

/** Only the runner holding the current execution may write; a stale or foreign runner is told to stop. */
export async function lockRunForRunner(
  tx: Prisma.TransactionClient,
  runId: string,
  execution: number,
  runnerId: string,
): Promise<Run> {
  const run = await lockRun(tx, runId);
  if (!run || run.runnerId !== runnerId || run.execution !== execution) {
    throw new AppError('conflict', 'This runner no longer holds the run');
  }
  return run;
}

function parseEvents(raw: string[]): RunEvent[] {
  return raw.map((json, i) => {
    let value: unknown;
    try {
      value = JSON.parse(json);
    } catch {
      throw new AppError('invalid_request', `event ${i} is not JSON`);
    }
    const parsed = runEventSchema.safeParse(value);
    if (!parsed.success)
      throw new AppError(
        'invalid_request',
        `event ${i} is invalid: ${parsed.error.issues[0]?.message ?? 'unknown'}`,
      );
    return parsed.data;
  });
}

/**
 * Appends what the harness did. A runner may only move its run forward through setup (PENDING) and start
 * (INPROGRESS); terminal states arrive through CompleteRun. Debug executions never change the run's state.
 */
export async function reportEvents(
  db: PrismaClient,
  req: { run_id: string; execution: number; runner_id: string; events_json: string[] },
  now = new Date(),
): Promise<RunnerControl> {
  const events = parseEvents(req.events_json);
  return db.$transaction(async (tx) => {
    const run = await lockRunForRunner(tx, req.run_id, req.execution, req.runner_id);
    const debug = run.debugExecution === req.execution;
    let state = run.state;
    // Consecutive events are written in one statement; a state change (its own event row) comes between, in order.
    let pending: Prisma.RunEventCreateManyInput[] = [];
    const writePending = async () => {
      if (pending.length > 0) await tx.runEvent.createMany({ data: pending });
      pending = [];
    };
    for (const event of events) {
      if (event.kind === 'state_changed') {
        if (debug || (event.to !== 'PENDING' && event.to !== 'INPROGRESS') || state === event.to) continue;
        if (state === 'CANCELLED') continue;
        await writePending();
        const moved = await transitionRun(tx, run, state, event.to, { now });
        if (moved) state = event.to;
        continue;
      }
      pending.push({
        runId: run.id,
        execution: req.execution,
        kind: event.kind,
        data: event as Prisma.InputJsonValue,
        createdAt: now,
      });
      if (event.kind === 'artifact') {
        await recordArtifact(tx, { runId: run.id, type: event.artifact_type, data: event.data, now });
      }
    }
    await writePending();
    await tx.run.update({
      where: { id: run.id },
      data: { lastHeartbeatAt: now, ...(debug ? {} : { updatedAt: now }) },
    });
    return takeRunnerControl(tx, { ...run, state }, req.execution);
  });
}

export async function heartbeat(
  db: PrismaClient,
  req: { run_id: string; execution: number; runner_id: string },
  now = new Date(),
): Promise<RunnerControl> {
  return db.$transaction(async (tx) => {
    const run = await lockRunForRunner(tx, req.run_id, req.execution, req.runner_id).catch((err: unknown) => {
      if (err instanceof AppError) return undefined;
      throw err;
    });
    // A runner that lost its run (cancelled and re-executed, or swept as lost) must stop.
    if (!run) return { cancel_requested: true, followups: [] };
    await tx.run.update({ where: { id: run.id }, data: { lastHeartbeatAt: now } });
    return takeRunnerControl(tx, run, req.execution);
  });
}
