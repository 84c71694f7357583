import { AppError } from '@conveyor/errors';
import type { Prisma } from '@conveyor/db';
import type { Caller } from '../auth/caller';
import { assertCron } from './cron-schedule';

const MODES = ['normal', 'plan', 'orchestrate'];

const invalid = (field: string, message: string) =>
  new AppError('invalid_request', `${field}: ${message}`, {
    details: { errors: [{ path: field, message }] },
  });

export function parseConfig(json: string | undefined): Record<string, unknown> {
  if (!json) return {};
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw invalid('agent_config', 'must be a JSON object');
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw invalid('agent_config', 'must be a JSON object');
  return value as Record<string, unknown>;
}

const hasSkill = (config: Record<string, unknown>): boolean =>
  (typeof config.skill_spec === 'string' && config.skill_spec.trim() !== '') ||
  (Array.isArray(config.skills) && config.skills.length > 0);

export interface Definition {
  name: string;
  cron: string;
  timezone: string;
  prompt: string;
  mode: string;
  config: Record<string, unknown>;
  agentUid: string | null;
}

/** The rules every written schedule obeys, checked in the domain whatever the caller validated before. */
export async function validateSchedule(
  tx: Prisma.TransactionClient,
  caller: Caller,
  d: Definition,
): Promise<void> {
  if (!d.name.trim()) throw invalid('name', 'must not be empty');
  if (d.name.length > 200) throw invalid('name', 'must be at most 200 characters');
  assertCron(d.cron, d.timezone);
  if (!d.prompt.trim() && !hasSkill(d.config))
    throw invalid('prompt', 'is required unless agent_config.skill_spec or agent_config.skills is given');
  if (!MODES.includes(d.mode)) throw invalid('mode', `must be one of ${MODES.join(', ')}`);
  if (
    d.agentUid &&
    !(await tx.agentIdentity.findFirst({
      where: { id: d.agentUid, teamId: caller.team_id },
      select: { id: true },
    }))
  ) {
    throw new AppError('resource_not_found', 'Agent identity not found');
  }
}
