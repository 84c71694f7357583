import * as r from '../schemas/resource-schemas';
import { callerOf } from '../middleware/authenticate';
import { toScheduledAgentItem } from '../mappers/scheduled-agent-item';
import { createScheduleBody, updateScheduleBody } from '../schemas/resource-request-schemas';
import { endpoint, json, type Endpoint } from './endpoint';

export const scheduleEndpoints: Endpoint[] = [
  endpoint({
    method: 'post',
    path: '/agent/schedules',
    tag: 'Schedules',
    summary: 'Create a scheduled agent',
    success: json(r.scheduledAgentItemSchema, 'Created.'),
    body: createScheduleBody,
    handle: async ({ req, res, body, api }) => {
      const schedule = await api.call(
        'schedules',
        'CreateSchedule',
        {
          caller: callerOf(req),
          name: body.name,
          cron_schedule: body.cron_schedule,
          timezone: body.timezone ?? '',
          prompt: body.prompt ?? '',
          enabled: body.enabled,
          config_json: JSON.stringify(body.agent_config ?? {}),
          agent_uid: body.agent_uid ?? '',
          metadata: body.metadata ?? {},
          mode: body.mode ?? '',
        },
        req.id,
      );
      res.json(toScheduledAgentItem(schedule));
    },
  }),

  endpoint({
    method: 'get',
    path: '/agent/schedules',
    tag: 'Schedules',
    summary: 'List scheduled agents',
    success: json(r.scheduleListResponseSchema, 'Sorted by name.'),
    handle: async ({ req, res, api }) => {
      const { schedules } = await api.call('schedules', 'ListSchedules', { caller: callerOf(req) }, req.id);
      res.json({ schedules: schedules.map((s) => toScheduledAgentItem(s)) });
    },
  }),

  endpoint({
    method: 'get',
    path: '/agent/schedules/:scheduleId',
    tag: 'Schedules',
    summary: 'Retrieve a scheduled agent',
    success: json(r.scheduledAgentItemSchema, 'The schedule with its recent runs.'),
    handle: async ({ req, res, api }) => {
      const schedule = await api.call(
        'schedules',
        'GetSchedule',
        { caller: callerOf(req), schedule_id: req.params.scheduleId },
        req.id,
      );
      res.json(toScheduledAgentItem(schedule, { withRecentRuns: true }));
    },
  }),

  endpoint({
    method: 'put',
    path: '/agent/schedules/:scheduleId',
    tag: 'Schedules',
    summary: 'Replace a scheduled agent',
    success: json(r.scheduledAgentItemSchema, 'Updated.'),
    body: updateScheduleBody,
    handle: async ({ req, res, body, api }) => {
      const schedule = await api.call(
        'schedules',
        'UpdateSchedule',
        {
          caller: callerOf(req),
          schedule_id: req.params.scheduleId,
          name: body.name,
          cron_schedule: body.cron_schedule,
          enabled: body.enabled,
          prompt: body.prompt ?? '',
          timezone: body.timezone,
          config_json: body.agent_config === undefined ? undefined : JSON.stringify(body.agent_config),
          agent_uid: body.agent_uid,
          metadata: body.metadata ?? {},
          has_metadata: body.metadata !== undefined,
          mode: body.mode,
        },
        req.id,
      );
      res.json(toScheduledAgentItem(schedule));
    },
  }),

  endpoint({
    method: 'delete',
    path: '/agent/schedules/:scheduleId',
    tag: 'Schedules',
    summary: 'Delete a scheduled agent',
    success: json(r.successResponseSchema, 'Deleted.'),
    handle: async ({ req, res, api }) => {
      await api.call(
        'schedules',
        'DeleteSchedule',
        { caller: callerOf(req), schedule_id: req.params.scheduleId },
        req.id,
      );
      res.json({ success: true });
    },
  }),

  // The SDK sends no body (and no Content-Type) on pause and resume.
  ...(
    [
      ['pause', 'PauseSchedule', 'Pause', 'Paused.'],
      ['resume', 'ResumeSchedule', 'Resume', 'Resumed.'],
    ] as const
  ).map(([action, rpc, summary, description]) =>
    endpoint({
      method: 'post',
      path: `/agent/schedules/:scheduleId/${action}` as const,
      tag: 'Schedules',
      summary,
      success: json(r.scheduledAgentItemSchema, description),
      handle: async ({ req, res, api }) => {
        const schedule = await api.call(
          'schedules',
          rpc,
          { caller: callerOf(req), schedule_id: req.params.scheduleId },
          req.id,
        );
        res.json(toScheduledAgentItem(schedule));
      },
    }),
  ),
];
