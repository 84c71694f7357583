import type { ScheduleServiceHandlers } from '@conveyor/proto';
import { scheduleToProto } from '../mappers/schedule-to-proto';
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
      createSchedule(deps, requireCaller(req.caller), req).then(scheduleToProto),
    ),
    ListSchedules: unary(logger, 'ListSchedules', async (req) => ({
      schedules: (await listSchedules(deps, requireCaller(req.caller))).map(scheduleToProto),
    })),
    GetSchedule: unary(logger, 'GetSchedule', (req) =>
      getSchedule(deps, requireCaller(req.caller), req.schedule_id).then(scheduleToProto),
    ),
    UpdateSchedule: unary(logger, 'UpdateSchedule', (req) =>
      updateSchedule(deps, requireCaller(req.caller), req).then(scheduleToProto),
    ),
    DeleteSchedule: unary(logger, 'DeleteSchedule', async (req) => {
      await deleteSchedule(deps, requireCaller(req.caller), req.schedule_id);
      return {};
    }),
    PauseSchedule: unary(logger, 'PauseSchedule', (req) =>
      setScheduleEnabled(deps, requireCaller(req.caller), req.schedule_id, false).then(scheduleToProto),
    ),
    ResumeSchedule: unary(logger, 'ResumeSchedule', (req) =>
      setScheduleEnabled(deps, requireCaller(req.caller), req.schedule_id, true).then(scheduleToProto),
    ),
  };
}
