/**
 * The stored configuration of an agent identity is the contract's field set (§6) as a JSON object. These pure
 * functions apply CreateAgent and UpdateAgent bodies to it and render AgentResponse.
 */

/** Fields kept in AgentIdentity.config (everything but name, which has its own column). */
export const CONFIG_FIELDS = [
  'description',
  'prompt',
  'agent_type',
  'base_model',
  'base_harness',
  'harness',
  'harness_auth_secrets',
  'inference_providers',
  'mcp_servers',
  'environment_id',
  'default_runner_uid',
  'worker_host',
  'credential_strategy',
  'on_behalf_of_enabled',
  'factory_uid',
  'secrets',
  'skills',
  'memory',
] as const;

export type IdentityConfig = Record<string, unknown>;

const isEmpty = (v: unknown): boolean =>
  v === '' ||
  (Array.isArray(v) && v.length === 0) ||
  (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0);

/** CreateAgent: keep what was given, drop nulls and empties, trim worker_host. */
export function configFromCreate(body: Record<string, unknown>): IdentityConfig {
  const config: IdentityConfig = {};
  for (const field of CONFIG_FIELDS) {
    let value = body[field];
    if (field === 'worker_host' && typeof value === 'string') value = value.trim();
    if (value === undefined || value === null || isEmpty(value)) continue;
    config[field] = value;
  }
  return config;
}

/**
 * UpdateAgent, per field: omitted or null → unchanged; empty ("", [], {}) → cleared; anything else → replaced
 * wholesale. `memory` on update carries only `attached_stores`; auto_memory is kept.
 */
export function applyUpdate(current: IdentityConfig, body: Record<string, unknown>): IdentityConfig {
  const next: IdentityConfig = { ...current };
  for (const field of CONFIG_FIELDS) {
    if (field === 'factory_uid') continue;
    let value = body[field];
    if (value === undefined || value === null) continue;
    if (field === 'worker_host' && typeof value === 'string') value = value.trim();
    if (field === 'memory') {
      const stores = (value as { attached_stores?: unknown }).attached_stores;
      if (stores === undefined || stores === null) continue;
      const memory = { ...((current.memory as Record<string, unknown> | undefined) ?? {}) };
      if (isEmpty(stores)) delete memory.attached_stores;
      else memory.attached_stores = stores;
      if (Object.keys(memory).length) next.memory = memory;
      else delete next.memory;
      continue;
    }
    if (isEmpty(value)) delete next[field];
    else next[field] = value;
  }
  return next;
}

/** AgentResponse (contract §6.1): required keys always present, optional ones when set. */
export function toAgentResponse(
  row: { id: string; name: string; createdAt: Date; updatedAt: Date; config: unknown },
  available: boolean,
): Record<string, unknown> {
  const config = (row.config ?? {}) as IdentityConfig;
  const memory = (config.memory ?? {}) as {
    attached_stores?: unknown[];
    auto_memory?: { enabled?: boolean };
  };
  const optional: Record<string, unknown> = {};
  for (const field of CONFIG_FIELDS) {
    if (['default_runner_uid', 'skills', 'secrets', 'memory'].includes(field)) continue;
    if (config[field] !== undefined) optional[field] = config[field];
  }
  return {
    uid: row.id,
    name: row.name,
    available,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    default_runner_uid: typeof config.default_runner_uid === 'string' ? config.default_runner_uid : '',
    skills: Array.isArray(config.skills) ? config.skills : [],
    secrets: Array.isArray(config.secrets) ? config.secrets : [],
    memory: {
      attached_stores: memory.attached_stores ?? [],
      auto_memory: { ...(memory.auto_memory ?? {}), enabled: memory.auto_memory?.enabled ?? true },
    },
    agent_type: 'CUSTOM',
    ...optional,
  };
}
