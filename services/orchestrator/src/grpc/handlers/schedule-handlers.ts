import type { ScheduleServiceHandlers } from '@conveyor/proto';
import { requireCaller } from '../require-caller';
import { unary } from '../unary-handler';
import {
  createSchedule,
  deleteSchedule,
  getSchedule,
  listSchedules,
  setScheduleEnabled,
  updateSchedule,
  type ScheduleDeps,
} from '../../schedules/manage-schedules';

/** ScheduleService: each RPC is one domain function behind the shared gRPC error wrapper. */
export function scheduleHandlers(deps: ScheduleDeps): ScheduleServiceHandlers {
  const { logger } = deps;
  return {
    CreateSchedule: unary(logger, 'CreateSchedule', (req) =>
      createSchedule(deps, requireCaller(req.caller), req),
    ),
    ListSchedules: unary(logger, 'ListSchedules', async (req) => ({
      schedules: await listSchedules(deps, requireCaller(req.caller)),
    })),
    GetSchedule: unary(logger, 'GetSchedule', (req) =>
      getSchedule(deps, requireCaller(req.caller), req.schedule_id),
    ),
    UpdateSchedule: unary(logger, 'UpdateSchedule', (req) =>
      updateSchedule(deps, requireCaller(req.caller), req),
    ),
    DeleteSchedule: unary(logger, 'DeleteSchedule', async (req) => {
      await deleteSchedule(deps, requireCaller(req.caller), req.schedule_id);
      return {};
    }),
    PauseSchedule: unary(logger, 'PauseSchedule', (req) =>
      setScheduleEnabled(deps, requireCaller(req.caller), req.schedule_id, false),
    ),
    ResumeSchedule: unary(logger, 'ResumeSchedule', (req) =>
      setScheduleEnabled(deps, requireCaller(req.caller), req.schedule_id, true),
    ),
  };
}
