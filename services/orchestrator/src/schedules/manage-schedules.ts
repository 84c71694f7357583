import { notFound } from '@conveyor/errors';
import { newId, type Prisma, type PrismaClient, type Schedule as ScheduleRow } from '@conveyor/db';
import type { Logger } from '@conveyor/logger';
import type { Caller } from '../auth/caller';
import { DEFAULT_TIMEZONE } from './cron-schedule';
import type { CreateScheduleInput, UpdateScheduleInput } from './schedule-requests';
import type { ScheduleTickQueue } from './schedule-tick-queue';
import { type Definition, parseConfig, validateSchedule } from './schedule-rules';
import { scheduleView, type ScheduleView } from './schedule-view';
import { syncTicks } from './sync-schedule-ticks';

export interface ScheduleDeps {
  db: PrismaClient;
  ticks: ScheduleTickQueue;
  logger: Logger;
  now?: () => number;
}

type Tx = Prisma.TransactionClient;

/** How many of a schedule's runs its details show. */
export const RECENT_RUNS = 20;

/** Team visibility, like runs: another team's schedule answers exactly like a missing one. */
async function lockScheduleForCaller(tx: Tx, caller: Caller, id: string): Promise<ScheduleRow> {
  // FOR UPDATE serialises writers of one schedule with the reconciler, so Redis always ends up matching the last commit.
  const locked = await tx.$queryRaw<
    Array<{ id: string }>
  >`SELECT id FROM "Schedule" WHERE id = ${id} AND "teamId" = ${caller.team_id} FOR UPDATE`;
  if (!locked.length) throw notFound('Schedule');
  return tx.schedule.findUniqueOrThrow({ where: { id } });
}

const principal = (caller: Caller) => ({
  type: caller.principal_type === 'AGENT' ? ('AGENT' as const) : ('USER' as const),
  id: caller.principal_id,
});

export async function createSchedule(
  deps: ScheduleDeps,
  caller: Caller,
  req: CreateScheduleInput,
): Promise<ScheduleView> {
  const config = parseConfig(req.config_json);
  const d: Definition = {
    name: req.name.trim(),
    cron: req.cron_schedule.trim(),
    timezone: req.timezone || DEFAULT_TIMEZONE,
    prompt: req.prompt,
    mode: req.mode || 'normal',
    config,
    agentUid: req.agent_uid || null,
  };
  const who = principal(caller);
  const row = await deps.db.$transaction(async (tx) => {
    await validateSchedule(tx, caller, d);
    const created = await tx.schedule.create({
      data: {
        id: newId('sched'),
        teamId: caller.team_id,
        name: d.name,
        cron: d.cron,
        timezone: d.timezone,
        enabled: req.enabled ?? true,
        prompt: d.prompt,
        mode: d.mode,
        agentConfig: d.config as Prisma.InputJsonValue,
        agentUid: d.agentUid,
        metadata: req.metadata ?? {},
        createdByType: who.type,
        createdById: who.id,
        updatedByType: who.type,
        updatedById: who.id,
      },
    });
    return created;
  });
  // After the commit, so a scheduler never exists for a row that might still roll back (the reconciler would
  // take it for an orphan). Should Redis refuse here, the reconciler creates the scheduler on its next pass.
  try {
    await syncTicks(deps.ticks, row);
  } catch (err) {
    deps.logger.warn(
      { scheduleId: row.id, err: (err as Error).message },
      'schedule created; scheduler creation left to the reconciler',
    );
  }
  return scheduleView(row, (deps.now ?? Date.now)());
}

export async function listSchedules(deps: ScheduleDeps, caller: Caller): Promise<ScheduleView[]> {
  const rows = await deps.db.schedule.findMany({
    where: { teamId: caller.team_id },
    orderBy: [{ name: 'asc' }, { id: 'asc' }],
  });
  const nowMs = (deps.now ?? Date.now)();
  return rows.map((row) => scheduleView(row, nowMs));
}

export async function getSchedule(deps: ScheduleDeps, caller: Caller, id: string): Promise<ScheduleView> {
  const row = await deps.db.schedule.findFirst({ where: { id, teamId: caller.team_id } });
  if (!row) throw notFound('Schedule');
  const recentRuns = await deps.db.run.findMany({
    where: { teamId: caller.team_id, scheduleId: id },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: RECENT_RUNS,
    select: { id: true, state: true, title: true, createdAt: true, updatedAt: true },
  });
  return scheduleView(row, (deps.now ?? Date.now)(), recentRuns);
}

/** Full replacement of name, cron, prompt and enabled; optional fields replace the stored value only when sent. */
export async function updateSchedule(
  deps: ScheduleDeps,
  caller: Caller,
  req: UpdateScheduleInput,
): Promise<ScheduleView> {
  const who = principal(caller);
  const row = await deps.db.$transaction(async (tx) => {
    const current = await lockScheduleForCaller(tx, caller, req.schedule_id);
    const config =
      req.config_json !== undefined
        ? parseConfig(req.config_json)
        : ((current.agentConfig ?? {}) as Record<string, unknown>);
    const d: Definition = {
      name: req.name.trim(),
      cron: req.cron_schedule.trim(),
      timezone: req.timezone !== undefined ? req.timezone || DEFAULT_TIMEZONE : current.timezone,
      prompt: req.prompt,
      mode: req.mode !== undefined ? req.mode || 'normal' : current.mode,
      config,
      agentUid: req.agent_uid !== undefined ? req.agent_uid || null : current.agentUid,
    };
    await validateSchedule(tx, caller, d);
    const updated = await tx.schedule.update({
      where: { id: current.id },
      data: {
        name: d.name,
        cron: d.cron,
        timezone: d.timezone,
        enabled: req.enabled,
        prompt: d.prompt,
        mode: d.mode,
        agentConfig: d.config as Prisma.InputJsonValue,
        agentUid: d.agentUid,
        metadata: req.has_metadata ? req.metadata : (current.metadata ?? {}),
        updatedByType: who.type,
        updatedById: who.id,
        updatedAt: new Date(),
      },
    });
    // A new expression replaces the pending tick at once.
    await syncTicks(deps.ticks, updated);
    return updated;
  });
  return scheduleView(row, (deps.now ?? Date.now)());
}

/** Pause removes the job scheduler (no tick fires); resume recreates it, so ticks continue from the next one. */
export async function setScheduleEnabled(
  deps: ScheduleDeps,
  caller: Caller,
  id: string,
  enabled: boolean,
): Promise<ScheduleView> {
  const who = principal(caller);
  const row = await deps.db.$transaction(async (tx) => {
    const current = await lockScheduleForCaller(tx, caller, id);
    if (current.enabled === enabled) {
      await syncTicks(deps.ticks, current);
      return current;
    }
    const updated = await tx.schedule.update({
      where: { id },
      data: { enabled, updatedByType: who.type, updatedById: who.id, updatedAt: new Date() },
    });
    await syncTicks(deps.ticks, updated);
    return updated;
  });
  return scheduleView(row, (deps.now ?? Date.now)());
}

/**
 * The row goes first, in its own transaction; the scheduler after the commit. A tick in between finds no row and
 * starts nothing; a crash in between leaves an orphan scheduler that the reconciler removes.
 */
export async function deleteSchedule(deps: ScheduleDeps, caller: Caller, id: string): Promise<void> {
  await deps.db.$transaction(async (tx) => {
    await lockScheduleForCaller(tx, caller, id);
    await tx.schedule.delete({ where: { id } });
  });
  try {
    await deps.ticks.remove(id);
  } catch (err) {
    deps.logger.warn(
      { scheduleId: id, err: (err as Error).message },
      'schedule deleted; scheduler removal left to the reconciler',
    );
  }
}
