import { Router } from 'express';
import { z } from 'zod';
import type { OrchestratorApi } from '../orchestrator-api';
import { callerOf } from '../middleware/authenticate';
import { toScheduledAgentItem } from '../mappers/scheduled-agent-item';
import { agentConfigSchema, metadataSchema, type AgentConfig } from '../schemas/agent-config';
import { parseBody } from '../validation';

const modeSchema = z.enum(['normal', 'plan', 'orchestrate']);
// Cron syntax and time-zone names are checked by the orchestrator with the parser BullMQ fires schedules with.
const cronSchema = z.string().trim().min(1, 'must be a cron expression, e.g. "0 9 * * *"').max(200);
const timezoneSchema = z.string().trim().min(1).max(100);

const hasSkill = (config: AgentConfig | undefined): boolean =>
  Boolean(config?.skill_spec?.trim() || config?.skills?.length);
const promptRule = {
  check: (b: { prompt?: string; agent_config?: AgentConfig }) =>
    (b.prompt?.trim() ?? '') !== '' || hasSkill(b.agent_config),
  message: {
    message: 'Required (unless agent_config.skill_spec or agent_config.skills is given)',
    path: ['prompt'],
  },
};

/** ScheduleCreate (contract §4.2); `timezone` is ours (IANA, default UTC). */
export const createScheduleBody = z
  .object({
    name: z.string().trim().min(1).max(200),
    cron_schedule: cronSchema,
    timezone: timezoneSchema.optional(),
    prompt: z.string().max(200_000).optional(),
    enabled: z.boolean().optional(),
    agent_config: agentConfigSchema.optional(),
    agent_uid: z.string().min(1).optional(),
    metadata: metadataSchema.optional(),
    mode: modeSchema.optional(),
    // Every schedule is team-owned here (like runs); the flag is accepted for compatibility.
    team: z.boolean().optional(),
  })
  .refine(promptRule.check, promptRule.message);

/**
 * ScheduleUpdate: every field except agent_config is required. The published SDK sends name, cron_schedule,
 * enabled, prompt and optionally agent_config, so those are the required ones; the other optional fields replace
 * the stored value only when present (docs/schedules.md).
 */
export const updateScheduleBody = z
  .object({
    name: z.string().trim().min(1).max(200),
    cron_schedule: cronSchema,
    enabled: z.boolean(),
    prompt: z.string().max(200_000).optional(),
    timezone: timezoneSchema.optional(),
    agent_config: agentConfigSchema.optional(),
    agent_uid: z.string().optional(),
    metadata: metadataSchema.optional(),
    mode: modeSchema.optional(),
  })
  .refine(promptRule.check, promptRule.message);

/** Scheduled agents (contract §4): create, list, retrieve, update, delete, pause, resume. */
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
