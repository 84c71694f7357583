/**
 * What creating or replacing a schedule asks for, in the domain's terms. Field names follow the API (as `Caller`
 * does); empty strings mean "not given", as the API defines them.
 */
export interface CreateScheduleInput {
  name: string;
  cron_schedule: string;
  timezone: string;
  prompt: string;
  enabled?: boolean;
  config_json: string;
  agent_uid: string;
  metadata: Record<string, string>;
  mode: string;
}

/** Optional fields replace the stored value only when present; metadata only when `has_metadata`. */
export interface UpdateScheduleInput {
  schedule_id: string;
  name: string;
  cron_schedule: string;
  prompt: string;
  enabled: boolean;
  timezone?: string;
  config_json?: string;
  agent_uid?: string;
  metadata: Record<string, string>;
  has_metadata: boolean;
  mode?: string;
}
