import { Router } from 'express';
import type { OrchestratorApi } from '../orchestrator-api';
import { callerOf } from '../middleware/authenticate';
import { toScheduledAgentItem } from '../mappers/scheduled-agent-item';
import { parseBody } from '../validation';
import { createScheduleBody, updateScheduleBody } from '../schemas/resource-request-schemas';

export function scheduleRoutes(api: OrchestratorApi): Router {
  const router = Router();

  router.post('/agent/schedules', async (req, res) => {
    const body = parseBody(createScheduleBody, req.body);
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
  });

  router.get('/agent/schedules', async (req, res) => {
    const { schedules } = await api.call('schedules', 'ListSchedules', { caller: callerOf(req) }, req.id);
    res.json({ schedules: schedules.map((s) => toScheduledAgentItem(s)) });
  });

  router.get('/agent/schedules/:scheduleId', async (req, res) => {
    const schedule = await api.call(
      'schedules',
      'GetSchedule',
      { caller: callerOf(req), schedule_id: req.params.scheduleId },
      req.id,
    );
    res.json(toScheduledAgentItem(schedule, { withRecentRuns: true }));
  });

  router.put('/agent/schedules/:scheduleId', async (req, res) => {
    const body = parseBody(updateScheduleBody, req.body);
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
  });

  router.delete('/agent/schedules/:scheduleId', async (req, res) => {
    await api.call(
      'schedules',
      'DeleteSchedule',
      { caller: callerOf(req), schedule_id: req.params.scheduleId },
      req.id,
    );
    res.json({ success: true });
  });

  // The SDK sends no body (and no Content-Type) on pause and resume.
  router.post('/agent/schedules/:scheduleId/pause', async (req, res) => {
    const schedule = await api.call(
      'schedules',
      'PauseSchedule',
      { caller: callerOf(req), schedule_id: req.params.scheduleId },
      req.id,
    );
    res.json(toScheduledAgentItem(schedule));
  });

  router.post('/agent/schedules/:scheduleId/resume', async (req, res) => {
    const schedule = await api.call(
      'schedules',
      'ResumeSchedule',
      { caller: callerOf(req), schedule_id: req.params.scheduleId },
      req.id,
    );
    res.json(toScheduledAgentItem(schedule));
  });

  return router;
}
